import type { MailKind } from '@plinth/shared';

/** The three parts of a mail's template; see render.ts for the `{{variable}}` syntax. */
export interface MailTemplate {
  subject: string;
  txt: string;
  html: string;
}

export const TEMPLATE_PARTS = ['subject', 'txt', 'html'] as const;
export type TemplatePart = (typeof TEMPLATE_PARTS)[number];

const htmlPage = (body: string) =>
  `<!doctype html>
<html><body style="font-family: sans-serif; line-height: 1.5">
${body}
<p style="color: #666; font-size: 0.9em">If you did not ask for this, you can ignore this message.</p>
</body></html>
`;

/** Built-in templates, used for every part a project does not override. */
export const DEFAULT_TEMPLATES: Readonly<Record<MailKind, MailTemplate>> = {
  verify: {
    subject: 'Confirm your e-mail address for {{project}}',
    txt: `Hello,

Confirm your e-mail address ({{to}}) for {{project}} by opening this link:

{{link}}

The link expires in 24 hours.

If you did not sign up: someone else used your address. Do not open the link. To take the
account over, ask {{project}} for a sign-in code with this address, or reset its password;
either one ends every session and every password someone else set.
`,
    html: htmlPage(`<p>Hello,</p>
<p>Confirm your e-mail address ({{to}}) for {{project}}:</p>
<p><a href="{{link}}">Confirm my e-mail address</a></p>
<p>Or paste this link into your browser: {{link}}</p>
<p>The link expires in 24 hours.</p>
<p>If you did not sign up: someone else used your address. Do not open the link. To take the
account over, ask {{project}} for a sign-in code with this address, or reset its password;
either one ends every session and every password someone else set.</p>`),
  },
  reset: {
    subject: 'Reset your {{project}} password',
    txt: `Hello,

Someone asked to reset the password of {{to}} on {{project}}. To choose a new password, open this link:

{{link}}

The link expires in 1 hour and works once. If you did not ask for it, you can ignore this message.
`,
    html: htmlPage(`<p>Hello,</p>
<p>Someone asked to reset the password of {{to}} on {{project}}.</p>
<p><a href="{{link}}">Choose a new password</a></p>
<p>Or paste this link into your browser: {{link}}</p>
<p>The link expires in 1 hour and works once.</p>`),
  },
  'email-change': {
    subject: 'Confirm your new e-mail address for {{project}}',
    txt: `Hello,

Someone asked to use this address ({{to}}) for an account on {{project}}. To confirm it, open this link:

{{link}}

The link expires in 24 hours and works once. Until it is opened, the account keeps its old address.
If you did not ask for it, you can ignore this message.
`,
    html: htmlPage(`<p>Hello,</p>
<p>Someone asked to use this address ({{to}}) for an account on {{project}}.</p>
<p><a href="{{link}}">Confirm my new e-mail address</a></p>
<p>Or paste this link into your browser: {{link}}</p>
<p>The link expires in 24 hours and works once. Until it is opened, the account keeps its old address.</p>`),
  },
  'webhook-disabled': {
    subject: 'A webhook of {{project}} was disabled',
    txt: `Hello,

The webhook {{webhook_id}} of project {{project}}, which sends to

{{url}}

was disabled: its deliveries kept failing after every retry. It takes no new events until it is
enabled again (PATCH /v1/projects/{{project}}/webhooks/{{webhook_id}} with {"enabled": true});
its failed deliveries can then be replayed (the dashboard's Webhooks screen, or the API).
`,
    html: `<!doctype html>
<html><body style="font-family: sans-serif; line-height: 1.5">
<p>Hello,</p>
<p>The webhook {{webhook_id}} of project {{project}}, which sends to {{url}}, was disabled: its
deliveries kept failing after every retry.</p>
<p>It takes no new events until it is enabled again (<code>PATCH /v1/projects/{{project}}/webhooks/{{webhook_id}}</code>
with <code>{"enabled": true}</code>); its failed deliveries can then be replayed (the dashboard's
Webhooks screen, or the API).</p>
</body></html>
`,
  },
  'email-changed': {
    subject: 'Your {{project}} e-mail address is being changed',
    txt: `Hello,

Someone signed in to your {{project}} account ({{to}}) asked to change its e-mail address to {{new_email}}.
The change happens only when the link sent to {{new_email}} is opened.

If this was not you, cancel the change (this also signs out every session) by opening this link:

{{link}}

Then change your password, or contact {{project}}.
`,
    html: htmlPage(`<p>Hello,</p>
<p>Someone signed in to your {{project}} account ({{to}}) asked to change its e-mail address to {{new_email}}.</p>
<p>The change happens only when the link sent to {{new_email}} is opened.</p>
<p>If this was not you, <a href="{{link}}">cancel the change</a> (this also signs out every session).
Or paste this link into your browser: {{link}}</p>
<p>Then change your password, or contact {{project}}.</p>`),
  },
  otp: {
    subject: 'Your {{project}} sign-in code: {{code}}',
    txt: `Hello,

Your sign-in code for {{project}} is:

{{code}}

It expires in 10 minutes. If you did not ask for it, you can ignore this message.
`,
    html: htmlPage(`<p>Hello,</p>
<p>Your sign-in code for {{project}} is:</p>
<p style="font-size: 1.6em; letter-spacing: 0.2em"><strong>{{code}}</strong></p>
<p>It expires in 10 minutes.</p>`),
  },
};
