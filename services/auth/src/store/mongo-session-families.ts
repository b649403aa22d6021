import type { Collection, Db, Filter } from 'mongodb';
import { ensureMongoIndex, MONGO_MAJORITY, REVOCATION_RETENTION_SECONDS, type ProjectId } from '@plinth/shared';
import type { SessionFamilies, StoredSession } from './session-families';
import type { NewSession, Rotation, RotationOutcome, SessionInfo } from './session-store';

/** One family; `_id` is `<project>:<sid>`. `purge_at` (TTL index): when MongoDB may forget it. */
interface FamilyDoc {
  _id: string;
  project: string;
  sid: string;
  user_id: string;
  created_at: number;
  expires_at: number;
  current: string;
  parent: string | null;
  grace: string | null;
  rotated_at: number | null;
  revoked_at: number | null;
  aal: number;
  updated_at: number;
  purge_at: Date;
}

/** A refresh token the family ever issued; `_id` is `<project>:<sha256>`. */
interface TokenDoc {
  _id: string;
  sid: string;
  purge_at: Date;
}

const WRITE = { writeConcern: MONGO_MAJORITY };
const RETENTION_MS = REVOCATION_RETENTION_SECONDS * 1000;

function info(d: FamilyDoc): SessionInfo {
  return { id: d.sid, user_id: d.user_id, created_at: d.created_at, expires_at: d.expires_at, aal: d.aal === 2 ? 2 : 1 };
}

/** Family and token documents outlive the family by the revocation retention (reuse is still recognised). */
function purgeAt(expiresAt: number): Date {
  return new Date(expiresAt + RETENTION_MS);
}

/**
 * SessionFamilies in the UserStore's MongoDB (`auth_sessions`, `auth_refresh_tokens`), majority
 * writes. A rotation is a compare-and-set on the family's current refresh-token hash
 * (findOneAndUpdate on `{_id, current: presented, revoked_at: null}`): of two racing rotations
 * of one token exactly one matches; the other reads the family again and finds its token is now
 * the parent (grace window) or older (reuse: the family is revoked).
 */
export class MongoSessionFamilies implements SessionFamilies {
  private constructor(
    private readonly families: Collection<FamilyDoc>,
    private readonly tokens: Collection<TokenDoc>,
  ) {}

  static async open(db: Db): Promise<MongoSessionFamilies> {
    const families = db.collection<FamilyDoc>('auth_sessions', WRITE);
    const tokens = db.collection<TokenDoc>('auth_refresh_tokens', WRITE);
    await ensureMongoIndex(families, { project: 1, user_id: 1 }, { name: 'project_user' });
    await ensureMongoIndex(families, { updated_at: 1, project: 1, sid: 1 }, { name: 'updated' });
    await ensureMongoIndex(families, { purge_at: 1 }, { name: 'ttl', expireAfterSeconds: 0 });
    await ensureMongoIndex(tokens, { purge_at: 1 }, { name: 'ttl', expireAfterSeconds: 0 });
    return new MongoSessionFamilies(families, tokens);
  }

  private family(project: ProjectId, sid: string): Promise<FamilyDoc | null> {
    return this.families.findOne({ _id: `${project}:${sid}` });
  }

  private async addToken(project: ProjectId, hash: string, sid: string, expiresAt: number): Promise<void> {
    await this.tokens.updateOne({ _id: `${project}:${hash}` }, { $setOnInsert: { sid, purge_at: purgeAt(expiresAt) } }, { upsert: true, ...WRITE });
  }

  async create(project: ProjectId, s: NewSession): Promise<void> {
    // The token first: a family is never live without the token that rotates it.
    await this.addToken(project, s.refresh_hash, s.id, s.expires_at);
    await this.families.insertOne(
      {
        _id: `${project}:${s.id}`,
        project,
        sid: s.id,
        user_id: s.user_id,
        created_at: s.now,
        expires_at: s.expires_at,
        current: s.refresh_hash,
        parent: null,
        grace: null,
        rotated_at: null,
        revoked_at: null,
        aal: s.aal ?? 1,
        updated_at: s.now,
        purge_at: purgeAt(s.expires_at),
      },
      WRITE,
    );
  }

  async rotate(project: ProjectId, rot: Rotation): Promise<RotationOutcome> {
    const t = await this.tokens.findOne({ _id: `${project}:${rot.presented_hash}` });
    if (!t) return { outcome: 'invalid' };
    let s = await this.family(project, t.sid);
    if (!s || s.revoked_at !== null || s.expires_at <= rot.now) return { outcome: 'invalid' };
    if (s.current === rot.presented_hash) {
      // The next token's mapping before the swap: if the swap loses, it names a token nobody holds.
      await this.addToken(project, rot.next_hash, s.sid, rot.next_expires_at);
      const swapped = await this.families.findOneAndUpdate(
        { _id: s._id, current: rot.presented_hash, revoked_at: null },
        {
          $set: {
            current: rot.next_hash,
            parent: rot.presented_hash,
            grace: rot.next_grace,
            rotated_at: rot.now,
            expires_at: rot.next_expires_at,
            updated_at: rot.now,
            purge_at: purgeAt(rot.next_expires_at),
          },
        },
        { returnDocument: 'after', ...WRITE },
      );
      if (swapped) return { outcome: 'rotated', session: info(swapped) };
      // Another rotation of the same token won: judge this one against the family as it is now.
      s = await this.family(project, t.sid);
      if (!s || s.revoked_at !== null) return { outcome: 'invalid' };
    }
    if (s.parent === rot.presented_hash && s.grace !== null && s.rotated_at !== null && rot.now - s.rotated_at <= rot.grace_ms) {
      return { outcome: 'grace', session: info(s), grace: s.grace };
    }
    await this.markRevoked(s._id, rot.now);
    return { outcome: 'reused', session: info(s) };
  }

  /** Whether it was live. */
  private async markRevoked(id: string, now: number): Promise<boolean> {
    const r = await this.families.updateOne(
      { _id: id, revoked_at: null },
      { $set: { revoked_at: now, grace: null }, $min: { purge_at: new Date(now + RETENTION_MS) } },
      WRITE,
    );
    return r.modifiedCount > 0;
  }

  async getActive(project: ProjectId, sid: string, now: number): Promise<SessionInfo | null> {
    const s = await this.family(project, sid);
    return s && s.revoked_at === null && s.expires_at > now ? info(s) : null;
  }

  async revokeByRefreshHash(project: ProjectId, refreshHash: string, now: number): Promise<{ sid: string; live: boolean } | null> {
    const t = await this.tokens.findOne({ _id: `${project}:${refreshHash}` });
    if (!t) return null;
    return { sid: t.sid, live: await this.markRevoked(`${project}:${t.sid}`, now) };
  }

  async revoke(project: ProjectId, sid: string, now: number): Promise<boolean> {
    return this.markRevoked(`${project}:${sid}`, now);
  }

  async revokeUser(project: ProjectId, userId: string, now: number): Promise<string[]> {
    const live = await this.families.find({ project, user_id: userId, revoked_at: null }, { projection: { _id: 1, sid: 1 } }).toArray();
    const revoked: string[] = [];
    for (const d of live) if (await this.markRevoked(d._id, now)) revoked.push(d.sid);
    return revoked;
  }

  async purgeProject(project: ProjectId): Promise<string[]> {
    const live = await this.families.find({ project, revoked_at: null }, { projection: { sid: 1 } }).toArray();
    await this.families.deleteMany({ project }, WRITE);
    // Project ids are [a-z0-9-]: nothing to escape; the `:` ends the id.
    await this.tokens.deleteMany({ _id: { $regex: `^${project}:` } }, WRITE);
    return live.map((d) => d.sid);
  }

  async changedSince(since: number, now: number, limit: number, after?: StoredSession): Promise<StoredSession[]> {
    const live: Filter<FamilyDoc> = { revoked_at: null, expires_at: { $gt: now } };
    // `after` is the last of the previous page, so its time is at or after `since`.
    const filter: Filter<FamilyDoc> = after
      ? {
          ...live,
          $or: [
            { updated_at: { $gt: after.updated_at } },
            { updated_at: after.updated_at, project: { $gt: after.project } },
            { updated_at: after.updated_at, project: after.project, sid: { $gt: after.id } },
          ],
        }
      : { ...live, updated_at: { $gte: since } };
    const docs = await this.families.find(filter).sort({ updated_at: 1, project: 1, sid: 1 }).limit(limit).toArray();
    return docs.map((d) => ({ ...info(d), project: d.project as ProjectId, updated_at: d.updated_at }));
  }

  async ping(): Promise<void> {
    await this.families.findOne({ _id: '' });
  }
}
