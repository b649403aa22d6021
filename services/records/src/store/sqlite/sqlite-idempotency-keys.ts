/**
 * The SQLite store's idempotency keys: a create with an `Idempotency-Key` remembers the record
 * it made until the claim's `expiresAt`, so the same key and body answer that record again.
 * Expired keys are deleted at most once a minute, in steps (MongoDB's TTL index does it there).
 */
import type { Statement } from 'better-sqlite3';
import { CleanupSchedule, ConflictError, deleteInSteps, type ProjectId, type RecordDoc, type SqliteDatabase } from '@plinth/shared';
import type { IdempotencyClaim } from '../record-store';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS idempotency_keys (
  project TEXT NOT NULL,
  collection TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  record TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  PRIMARY KEY (project, collection, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idempotency_keys_expiry ON idempotency_keys (expires_at);
`;

/** Expired keys are deleted at most this often, in steps (deleteInSteps). */
const PURGE_EVERY_MS = 60_000;

export class SqliteIdempotencyKeys {
  private readonly purges = new CleanupSchedule(PURGE_EVERY_MS, (nowMs) => {
    const now = new Date(nowMs).toISOString();
    return deleteInSteps((limit) => this.stmt.purge.run(now, limit).changes, () => !this.db.open);
  });
  private readonly stmt: {
    find: Statement<[string, string, string], { fingerprint: string; record: string; expires_at: string }>;
    remember: Statement<[string, string, string, string, string, string]>;
    forget: Statement<[string, string]>;
    forgetProject: Statement<[string]>;
    purge: Statement<[string, number]>;
    count: Statement<[], { n: number }>;
  };

  constructor(private readonly db: SqliteDatabase) {
    db.exec(SCHEMA);
    this.stmt = {
      find: db.prepare('SELECT fingerprint, record, expires_at FROM idempotency_keys WHERE project = ? AND collection = ? AND key = ?'),
      remember: db.prepare(
        'INSERT OR REPLACE INTO idempotency_keys (project, collection, key, fingerprint, record, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      forget: db.prepare('DELETE FROM idempotency_keys WHERE project = ? AND collection = ?'),
      forgetProject: db.prepare('DELETE FROM idempotency_keys WHERE project = ?'),
      purge: db.prepare(
        'DELETE FROM idempotency_keys WHERE (project, collection, key) IN (SELECT project, collection, key FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)',
      ),
      count: db.prepare('SELECT count(*) AS n FROM idempotency_keys'),
    };
  }

  /**
   * In the create's transaction, before its insert: the record a live key with the same body
   * made (the create replays it); ConflictError when the live key came with another body;
   * undefined when the key is new or expired.
   */
  replay(project: ProjectId, collection: string, claim: IdempotencyClaim): RecordDoc | undefined {
    const prior = this.stmt.find.get(project, collection, claim.key);
    if (!prior || prior.expires_at <= claim.now) return undefined;
    if (prior.fingerprint !== claim.fingerprint) {
      throw new ConflictError('This Idempotency-Key was used with another request body.', { header: 'Idempotency-Key' });
    }
    return JSON.parse(prior.record) as RecordDoc;
  }

  /** In the create's transaction, after its insert: the key now answers `record`. */
  remember(project: ProjectId, collection: string, claim: IdempotencyClaim, record: RecordDoc): void {
    this.stmt.remember.run(project, collection, claim.key, claim.fingerprint, JSON.stringify(record), claim.expiresAt);
  }

  /** A deleted collection's keys (in its transaction). */
  forgetCollection(project: ProjectId, collection: string): void {
    this.stmt.forget.run(project, collection);
  }

  /** Every key of a purged project (in its transaction). */
  forgetProject(project: ProjectId): void {
    this.stmt.forgetProject.run(project);
  }

  /**
   * Deletes the keys expired at `now`, at most once a minute, in steps: the first step before
   * the create that asked, the others between requests. Every create through the JavaScript SDK
   * stores a key for a day, so a minute's purge holds a minute's creates of the day before. A
   * purge that fails (the lock stays taken, the disk is full) fails no create; the next one, a
   * minute on, takes what it left.
   */
  purgeExpired(now: string): void {
    this.purges.maybeRun(Date.parse(now));
  }

  /** Number of keys held (expired ones included until purged). */
  count(): number {
    return this.stmt.count.get()?.n ?? 0;
  }
}
