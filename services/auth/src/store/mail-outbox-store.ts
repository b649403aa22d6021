import type { ProjectId } from '@plinth/shared';

/**
 * Auth's own copy of the mail jobs it puts on a queue that lives in Redis (BullMQ, in a cluster):
 * one row per mail, written to the users' database before the job is enqueued and deleted once
 * the queue reports the job delivered or dead. While a row exists, the mail is re-enqueued
 * whenever the queue no longer holds its job — a Redis that restarted empty or failed over to a
 * replica that lagged loses no mail (mail/redis-safe-mail-outbox.ts). The job is stored sealed:
 * it carries a one-time token or code, which the database otherwise only keeps hashed.
 */
export interface StoredMail {
  /** The mail job's id (its idempotency key on the queue). */
  id: string;
  project: ProjectId;
  /** The MailJob as JSON, sealed (AES-256-GCM, bound to `id`). */
  sealed: string;
  /** Epoch ms. */
  created_at: number;
}

export interface MailOutboxStore {
  add(mail: StoredMail): Promise<void>;
  /** Rows with an id after `afterId`, ordered by id, at most `limit`. */
  after(afterId: string, limit: number): Promise<StoredMail[]>;
  /** Deletes these rows (by id). Idempotent. */
  remove(ids: readonly string[]): Promise<void>;
  /** Deletes rows created before `before` (epoch ms); answers how many. */
  trim(before: number): Promise<number>;
}
