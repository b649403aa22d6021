import type { LinkType, MailJob } from '@plinth/shared';
import type { ProjectMailSettings } from '../store/mail-settings';
import type { MailTemplate } from './default-templates';

/** A mail ready for a transport. */
export interface RenderedMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** The variables a template may use; which ones are set depends on the kind. */
export type TemplateVariables = { [name: string]: string };

const VARIABLE = /\{\{\s*([a-z_]+)\s*\}\}/g;

const HTML_ESCAPES: { [ch: string]: string } = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch]!);
}

/**
 * Replaces `{{name}}` with the variable's value, passed through `encode`. A name that is not a
 * variable stays as written, so a typo in an override shows in the mail instead of vanishing.
 */
export function interpolate(template: string, vars: TemplateVariables, encode: (v: string) => string): string {
  return template.replace(VARIABLE, (whole, name: string) => (name in vars ? encode(vars[name]!) : whole));
}

/**
 * The link a verify/reset/email-change mail (or the cancel link of an email-changed notice)
 * carries: the project's redirect URL with `?token=…&type=…`.
 */
export function mailLink(redirectUrl: string, kind: LinkType, token: string): string {
  const url = new URL(redirectUrl);
  url.searchParams.set('token', token);
  url.searchParams.set('type', kind);
  return url.toString();
}

/**
 * Template variables of a job: `project`, `to`, and `link` + `token` (verify, reset,
 * email-change), `code` (otp) or `new_email` + `link` + `token` (email-changed: the link cancels
 * the change; empty for a job queued before cancel links existed), `webhook_id` + `url`
 * (webhook-disabled).
 */
export function templateVariables(job: MailJob, settings: ProjectMailSettings): TemplateVariables {
  const vars: TemplateVariables = { project: job.project, to: job.to };
  if ('webhook_id' in job.data) {
    vars.webhook_id = job.data.webhook_id;
    vars.url = job.data.url;
  } else if ('code' in job.data) {
    vars.code = job.data.code;
  } else if ('new_email' in job.data) {
    vars.new_email = job.data.new_email;
    vars.token = job.data.token ?? '';
    vars.link = job.data.token ? mailLink(settings.redirect_url, 'email-change-cancel', job.data.token) : '';
  } else if (job.kind === 'verify' || job.kind === 'reset' || job.kind === 'email-change') {
    vars.token = job.data.token;
    vars.link = mailLink(settings.redirect_url, job.kind, job.data.token);
  }
  return vars;
}

/**
 * Renders a job: the HTML part escapes every value; the text part is plain; the subject is
 * plain and kept on one line.
 */
export function renderMail(job: MailJob, settings: ProjectMailSettings, template: MailTemplate): RenderedMail {
  const vars = templateVariables(job, settings);
  const plain = (v: string) => v;
  return {
    from: settings.mail_from,
    to: job.to,
    subject: interpolate(template.subject, vars, plain).replace(/\s*[\r\n]+\s*/g, ' ').trim(),
    text: interpolate(template.txt, vars, plain),
    html: interpolate(template.html, vars, escapeHtml),
  };
}
