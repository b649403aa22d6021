import { InProcessRevocationList, REVOCATION_RETENTION_SECONDS, type ProjectId, type SqliteDatabase } from '@plinth/shared';
import { SqliteSessionFamilies } from './sqlite-session-families';
import type { NewSession, Rotation, RotationOutcome, SessionInfo, SessionStore } from './session-store';

/**
 * The in-process list (listeners hear this process's revocations at once), whose `isRevoked`
 * also reads the session row: other worker processes on the same auth.db revoke sessions this
 * process never heard of, and a primary-key lookup sees them the moment they commit. A session
 * without a row is refused too (fails closed): a project deletion on another worker deletes the
 * rows, and every token this store issued had its row before it was handed out (sign-in,
 * refresh and minting all write it first).
 */
class SharedRevocationList extends InProcessRevocationList {
  private readonly revokedAt;

  constructor(db: SqliteDatabase, nowSeconds: () => number) {
    super(nowSeconds);
    this.revokedAt = db.prepare('SELECT revoked_at FROM auth_sessions WHERE project = ? AND id = ?').pluck();
  }

  override async isRevoked(project: ProjectId, sid: string, iat: number): Promise<boolean> {
    if (await super.isRevoked(project, sid, iat)) return true;
    const at = this.revokedAt.get(project, sid) as number | null | undefined;
    if (at === undefined) return true;
    return typeof at === 'number' && iat <= Math.floor(at / 1000);
  }
}

const RETENTION_MS = REVOCATION_RETENTION_SECONDS * 1000;

/**
 * SessionStore on SQLite with an in-process revocation broadcast (standalone mode): the families
 * in `auth.db` (SqliteSessionFamilies), and every revocation told to this process's listeners.
 * Sessions survive a restart; revocations are reloaded into `revocations` at start.
 */
export class EmbeddedSessionStore implements SessionStore {
  readonly revocations: InProcessRevocationList;
  private readonly families: SqliteSessionFamilies;

  constructor(db: SqliteDatabase, now: () => number = Date.now) {
    this.families = new SqliteSessionFamilies(db);
    this.revocations = new SharedRevocationList(db, () => Math.floor(now() / 1000));
    for (const r of this.families.revokedSince(now() - RETENTION_MS)) this.revocations.add(r.project, r.id, Math.floor(r.revoked_at / 1000));
  }

  private broadcast(project: ProjectId, sids: string[], now: number): void {
    for (const sid of sids) this.revocations.add(project, sid, Math.floor(now / 1000));
  }

  async create(project: ProjectId, s: NewSession): Promise<void> {
    await this.families.create(project, s);
  }

  async rotate(project: ProjectId, rot: Rotation): Promise<RotationOutcome> {
    const outcome = await this.families.rotate(project, rot);
    if (outcome.outcome === 'reused') this.broadcast(project, [outcome.session.id], rot.now);
    return outcome;
  }

  async getActive(project: ProjectId, sid: string, now: number): Promise<SessionInfo | null> {
    return this.families.getActive(project, sid, now);
  }

  async revokeByRefreshHash(project: ProjectId, refreshHash: string, now: number): Promise<boolean> {
    const r = await this.families.revokeByRefreshHash(project, refreshHash, now);
    if (r?.live) this.broadcast(project, [r.sid], now);
    return r !== null;
  }

  async revoke(project: ProjectId, sid: string, now: number): Promise<boolean> {
    const live = await this.families.revoke(project, sid, now);
    if (live) this.broadcast(project, [sid], now);
    return live;
  }

  async revokeUser(project: ProjectId, userId: string, now: number): Promise<number> {
    const sids = await this.families.revokeUser(project, userId, now);
    this.broadcast(project, sids, now);
    return sids.length;
  }

  async purgeProject(project: ProjectId, now: number): Promise<void> {
    this.broadcast(project, await this.families.purgeProject(project), now);
  }

  async ping(): Promise<void> {
    await this.families.ping();
  }

  async close(): Promise<void> {
    // The database handle belongs to the caller (shared with the user store and the outbox).
  }
}
