import { createHash } from 'node:crypto';

/** What a hosted action page shows. */
export type ActionView =
  | { kind: 'verify-form'; token: string; error?: string }
  | { kind: 'reset-form'; token: string; error?: string }
  | { kind: 'email-change-form'; token: string; error?: string }
  | { kind: 'email-change-cancel-form'; token: string }
  | { kind: 'done'; title: string; message: string }
  | { kind: 'failed'; title: string; message: string };

const STYLE = `body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#222}
h1{font-size:1.4rem}label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
button{margin-top:1rem;padding:.6rem 1.2rem;font-size:1rem}.error{color:#b00020}.ok{color:#0a7a2f}`;

/**
 * The Content-Security-Policy of every action page: nothing loads, no script runs, the one
 * inline style block is allowed by its hash, and forms post only back to this page.
 */
export const ACTION_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const ESCAPES: { [ch: string]: string } = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${esc(title)}</title><style>${STYLE}</style></head>
<body><main>
<h1>${esc(title)}</h1>
${body}
</main></body></html>
`;
}

const hidden = (type: string, token: string) =>
  `<input type="hidden" name="type" value="${esc(type)}"><input type="hidden" name="token" value="${esc(token)}">`;

const errorLine = (error: string | undefined) => (error ? `<p class="error" role="alert">${esc(error)}</p>\n` : '');

/**
 * The optional password of a confirmation form: typed by whoever created the account, it keeps
 * the password and sessions; left empty, confirming gives the account to the address's owner.
 */
const HOLDER_FIELD = `<label for="password">Your password for this account (optional)</label>
<input id="password" name="password" type="password" autocomplete="current-password">
<p>Type it if you created this account: it keeps your password and signs nobody out. If you did not
create it, leave it empty: confirming then makes the account yours, removes any password someone
else set and signs out every session (sign in with a code, or set a password with "forgot password").</p>
`;

/** Renders a view as a whole HTML document (every value escaped; no script). */
export function renderActionPage(project: string, view: ActionView): string {
  switch (view.kind) {
    case 'verify-form':
      return page(
        'Confirm your e-mail address',
        `${errorLine(view.error)}<p>Confirm the e-mail address of your ${esc(project)} account.</p>
<form method="post">${hidden('verify', view.token)}${HOLDER_FIELD}<button type="submit">Confirm my e-mail address</button></form>`,
      );
    case 'email-change-form':
      return page(
        'Confirm your new e-mail address',
        `${errorLine(view.error)}<p>Make this address the e-mail of your ${esc(project)} account.</p>
<form method="post">${hidden('email-change', view.token)}${HOLDER_FIELD}<button type="submit">Confirm my new e-mail address</button></form>`,
      );
    case 'email-change-cancel-form':
      return page(
        'Cancel the change of your e-mail address',
        `<p>Cancel the change of the e-mail address of your ${esc(project)} account. Every session of the account is signed out too.</p>
<form method="post">${hidden('email-change-cancel', view.token)}<button type="submit">Cancel the change</button></form>`,
      );
    case 'reset-form':
      return page(
        'Choose a new password',
        `${errorLine(view.error)}
<form method="post">${hidden('reset', view.token)}
<label for="password">New password (8 to 72 bytes)</label><input id="password" name="password" type="password" autocomplete="new-password" required minlength="8">
<label for="confirm">New password again</label><input id="confirm" name="confirm" type="password" autocomplete="new-password" required minlength="8">
<button type="submit">Set my new password</button></form>`,
      );
    case 'done':
      return page(view.title, `<p class="ok" role="status">${esc(view.message)}</p>`);
    case 'failed':
      return page(view.title, `<p class="error" role="alert">${esc(view.message)}</p>`);
  }
}
