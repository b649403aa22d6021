import { isProjectId } from '../types';

/**
 * The name of the queue auth enqueues to and the mailer consumes from (BullMQ queue name; the
 * embedded outbox ignores it). RENAMING IT STRANDS QUEUED JOBS: jobs already waiting or retrying
 * under the old name are never delivered and their dead letters disappear from the API. Drain the
 * old queue first, or leave this constant alone.
 */
export const MAIL_QUEUE_NAME = 'plinth-mail';

/**
 * What a mail job asks for: an e-mail verification link, a password-reset link, a sign-in code,
 * a confirmation link for a new address (`email-change`, sent to the new address), the notice
 * to the old address that a change was asked for (`email-changed`), or the notice to the
 * operator that a webhook was disabled after its deliveries kept failing (`webhook-disabled`).
 */
export type MailKind = 'verify' | 'reset' | 'otp' | 'email-change' | 'email-changed' | 'webhook-disabled';

export const MAIL_KINDS: readonly MailKind[] = ['verify', 'reset', 'otp', 'email-change', 'email-changed', 'webhook-disabled'];

/** The kinds whose mail carries a link with a one-time token. */
export type LinkMailKind = 'verify' | 'reset' | 'email-change';

/** The `type` of a link in a mail: a link kind, or the cancel link of the `email-changed` notice. */
export type LinkType = LinkMailKind | 'email-change-cancel';

/**
 * One mail to send. THIS SHAPE IS A WIRE FORMAT: jobs live in Redis or the outbox between
 * producer and consumer, possibly across a deploy, so fields may only be added as optional.
 * `verify` and `reset` carry `{token}` (the one-time token the link carries as `?token=`);
 * `otp` carries `{code}` (the 6-digit code, printed in the body); `email-change` carries `{token}`;
 * `email-changed` carries `{new_email, token?}` (the address the change goes to, printed in the
 * body, and the one-time token of the link that cancels the change; jobs queued before the
 * cancel link existed have no token); `webhook-disabled` carries `{webhook_id, url}`.
 */
export interface MailJob {
  /** Unique per mail; the idempotency key (see MailQueue.enqueue). Matches MAIL_JOB_ID_PATTERN. */
  id: string;
  project: string;
  kind: MailKind;
  /** Recipient e-mail address. */
  to: string;
  data: { token: string } | { code: string } | { new_email: string; token?: string } | { webhook_id: string; url: string };
  /** ISO 8601, when the producer created the job; delivery latency is measured from here. */
  created_at: string;
}

/**
 * Job ids: a letter, then letters, digits, `_` or `-`, at most 128 characters (BullMQ refuses
 * ids with `:` and treats all-digit ids as its own). `newId('mail_')` produces valid ids.
 */
export const MAIL_JOB_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,127}$/;

const LOOSE_EMAIL = /^[^\s@<>()",;]+@[^\s@<>()",;]+$/;

/** Why `value` is not a MailJob, naming the field; null when it is one. */
export function mailJobProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return 'a mail job must be an object';
  const job = value as { [key: string]: unknown };
  if (typeof job.id !== 'string' || !MAIL_JOB_ID_PATTERN.test(job.id)) {
    return '"id" must match ' + String(MAIL_JOB_ID_PATTERN);
  }
  if (!isProjectId(job.project)) return '"project" must be a project id';
  if (typeof job.kind !== 'string' || !MAIL_KINDS.includes(job.kind as MailKind)) {
    return '"kind" must be one of ' + MAIL_KINDS.join(', ');
  }
  if (typeof job.to !== 'string' || job.to.length > 320 || !LOOSE_EMAIL.test(job.to)) {
    return '"to" must be an e-mail address';
  }
  const data = job.data as { [key: string]: unknown } | null;
  if (typeof data !== 'object' || data === null) return '"data" must be an object';
  if (job.kind === 'otp') {
    if (typeof data.code !== 'string' || data.code.length === 0) return '"data.code" must be a non-empty string';
  } else if (job.kind === 'webhook-disabled') {
    if (typeof data.webhook_id !== 'string' || data.webhook_id.length === 0) return '"data.webhook_id" must be a non-empty string';
    if (typeof data.url !== 'string' || data.url.length === 0) return '"data.url" must be a non-empty string';
  } else if (job.kind === 'email-changed') {
    if (typeof data.new_email !== 'string' || data.new_email.length === 0) return '"data.new_email" must be a non-empty string';
    if (data.token !== undefined && (typeof data.token !== 'string' || data.token.length === 0)) return '"data.token" must be a non-empty string';
  } else if (typeof data.token !== 'string' || data.token.length === 0) {
    return '"data.token" must be a non-empty string';
  }
  if (typeof job.created_at !== 'string' || Number.isNaN(Date.parse(job.created_at))) {
    return '"created_at" must be an ISO 8601 timestamp';
  }
  return null;
}

/** Throws a TypeError naming the bad field unless `value` is a well-formed MailJob. */
export function assertMailJob(value: unknown): asserts value is MailJob {
  const problem = mailJobProblem(value);
  if (problem) throw new TypeError(`Invalid mail job: ${problem}.`);
}
