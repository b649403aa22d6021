import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { newId } from '@plinth/shared';
import type { AuditActorKind, AuditEntry, AuditQuery, OperatorStore } from '../store/operator-store';
import type { OperatorActor } from './operator-auth';

/** Who an audit entry names. */
export interface AuditActor {
  kind: AuditActorKind;
  id: string | null;
  label: string;
}

export function actorOf(actor: OperatorActor): AuditActor {
  return actor.kind === 'bootstrap'
    ? { kind: 'bootstrap', id: null, label: 'bootstrap' }
    : { kind: 'operator', id: actor.operator.id, label: actor.operator.email };
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Project routes that take a POST but change nothing: checking and simulating rules, resolving a subscription, a file token (to read files). */
const READ_ONLY_POSTS = /^\/v1\/projects\/[^/]+\/(collections\/[^/]+\/(rules\/validate|rules\/simulate|subscribe)|files\/token)$/;

/** Whether a request changes something (and so is audited, and refused to a viewer). */
export function isMutation(method: string, path: string): boolean {
  if (READ_METHODS.has(method)) return false;
  return !(method === 'POST' && READ_ONLY_POSTS.test(path));
}

/**
 * Project routes that read what a viewer must not see: the export of users (password hashes,
 * second-factor secrets) and of Auth settings with the providers' client secrets. They need the
 * admin role, and are audited like a change.
 */
const SECRET_READS = /^\/v1\/projects\/[^/]+\/auth\/portability\//;

/** Whether a read hands out secrets (and so is audited, and refused to a viewer). */
export function readsSecrets(method: string, path: string): boolean {
  return READ_METHODS.has(method) && SECRET_READS.test(path);
}

const DAY_MS = 86_400_000;

/**
 * Entries wait at most this long to be written, together with the others of that moment: with a
 * commit every 20 ms one worker's secret-key create throughput halved; every 100 ms it moved by
 * no more than the machine's noise.
 */
const FLUSH_MS = 100;
/** ...or until this many are waiting. */
const FLUSH_AT = 500;

/**
 * The audit log (docs/operators.md "The audit log"): one entry per mutating operator or secret-key
 * call, written when the answer is sent (with its status). Only who, what (method and path, never
 * the query string or body), when and from where. Entries older than the retention are pruned.
 * Entries are written in groups (every FLUSH_MS, one transaction), so a server taking thousands of
 * secret-key writes a second does not pay a second commit for each; a query here writes what
 * waits first.
 */
export class AuditLog {
  private timer: NodeJS.Timeout | null = null;
  private waiting: AuditEntry[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: OperatorStore,
    private readonly logger: Logger,
    private readonly retentionDays: number,
  ) {}

  /** Writes an entry once `res` has been answered. */
  record(req: Request, res: Response, actor: AuditActor, project: string | null): void {
    const path = (req.originalUrl ?? req.url).split('?')[0]!.slice(0, 500);
    const method = req.method;
    const address = req.ip ?? null;
    // 'close' comes after a whole answer and also when the client went away first (the change
    // may still have been made): either way the call is in the log.
    res.once('close', () => {
      const now = Date.now();
      const entry: AuditEntry = {
        id: newId('aud_', now),
        at: new Date(now).toISOString(),
        actor_kind: actor.kind,
        actor_id: actor.id,
        actor: actor.label,
        project,
        method,
        path,
        // 499 (client closed the request) when no answer was sent.
        status: res.headersSent ? res.statusCode : 499,
        address,
      };
      this.waiting.push(entry);
      if (this.waiting.length >= FLUSH_AT) void this.flush();
      else this.flushTimer ??= setTimeout(() => void this.flush(), FLUSH_MS);
    });
  }

  /** Writes every waiting entry; resolves once they (and any write before) are stored. */
  flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const entries = this.waiting;
    this.waiting = [];
    if (entries.length > 0) {
      this.flushing = this.flushing
        .then(() => this.store.appendAudit(...entries))
        .catch((err: unknown) => this.logger.error({ err, entries: entries.length }, 'audit entries not written'));
    }
    return this.flushing;
  }

  async query(q: AuditQuery): Promise<AuditEntry[]> {
    await this.flush();
    return this.store.queryAudit(q);
  }

  /** Removes entries past the retention and expired operator sessions. */
  async prune(now = Date.now()): Promise<number> {
    await this.store.pruneSessions(new Date(now).toISOString());
    return this.store.pruneAudit(new Date(now - this.retentionDays * DAY_MS).toISOString());
  }

  /** Prunes now and then every `intervalMs` (the timer does not keep the process alive). */
  start(intervalMs = 3_600_000): void {
    const run = () => this.prune().catch((err: unknown) => this.logger.warn({ err }, 'audit prune failed'));
    void run();
    this.timer = setInterval(run, intervalMs);
    this.timer.unref();
  }

  /** Stops pruning and writes what waits. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}
