import type { ProjectId } from '../types';
import { REVOCATION_RETENTION_SECONDS, type RevocationChecker } from './revocation-checker';

/** Called for every revocation recorded in an InProcessRevocationList. */
export type RevocationListener = (project: ProjectId, sid: string, revokedAt: number) => void;

/**
 * Revocations held in memory, for standalone mode where every service runs in one process.
 * The embedded SessionStore of the auth service owns one (`store.revocations`), records every
 * revocation in it (also those loaded from its SQLite file at start), and the process wiring
 * hands it to other services as their RevocationChecker. `subscribe` is the in-process
 * broadcast: listeners hear each revocation synchronously.
 */
export class InProcessRevocationList implements RevocationChecker {
  private readonly revoked = new Map<string, number>();
  private readonly listeners = new Set<RevocationListener>();
  private recorded = 0;

  constructor(private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000)) {}

  /** Records that `sid` ended at `revokedAt` (seconds). Keeps the earliest time if repeated. */
  add(project: ProjectId, sid: string, revokedAt: number): void {
    const key = `${project}\n${sid}`;
    const prev = this.revoked.get(key);
    if (prev === undefined || revokedAt < prev) this.revoked.set(key, revokedAt);
    if (++this.recorded % 1000 === 0) this.prune();
    for (const l of this.listeners) l(project, sid, revokedAt);
  }

  async isRevoked(project: ProjectId, sid: string, iat: number): Promise<boolean> {
    const at = this.revoked.get(`${project}\n${sid}`);
    return at !== undefined && iat <= at;
  }

  /** Registers a listener; returns a function that removes it. */
  subscribe(listener: RevocationListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Drops markers older than every token they could refuse. */
  private prune(): void {
    const cutoff = this.nowSeconds() - REVOCATION_RETENTION_SECONDS;
    for (const [key, at] of this.revoked) if (at < cutoff) this.revoked.delete(key);
  }
}
