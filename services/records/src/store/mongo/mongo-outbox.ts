/**
 * The MongoDB outbox (docs/architecture.md "The outbox"): a change event is a document of
 * `plinth_outbox`, inserted in the same multi-document transaction as the write it describes.
 *
 * Positions: one counter document (`plinth_outbox_meta`, `_id: 'seq'`) incremented with `$inc`
 * inside the transaction. Two transactions that both increment it conflict (WriteConflict: the
 * later one is aborted and retried by the driver until the earlier one has committed), so a
 * position is taken only once the previous one is committed: positions are gap-free and in
 * commit order, and reading `_id > cursor` in order never passes over a row that commits later.
 * The price: every write with an event serialises on that document. A second document per
 * project and collection (`head:<project>/<collection>`) gives each row its predecessor there.
 * The epoch is a random id in `_id: 'epoch'`, made with the outbox.
 */
import { randomBytes } from 'node:crypto';
import type { ChangeEventInput, EventRetention, OutboxRow, OutboxSource, ProjectId } from '@plinth/shared';
import type { ClientSession, Db, TransactionOptions } from 'mongodb';

export const MONGO_OUTBOX = 'plinth_outbox';
export const MONGO_OUTBOX_META = 'plinth_outbox_meta';

interface OutboxDocument {
  _id: number;
  prev: number;
  cprev: number;
  project: string;
  collection: string;
  committed_at: number;
  payload: string;
}

interface MetaDocument {
  _id: string;
  seq?: number;
  epoch?: string;
}

const outbox = (db: Db) => db.collection<OutboxDocument>(MONGO_OUTBOX);
const meta = (db: Db) => db.collection<MetaDocument>(MONGO_OUTBOX_META);

/** Makes the outbox's epoch (once) and its index. Idempotent. */
export async function initMongoOutbox(db: Db): Promise<void> {
  await meta(db).updateOne({ _id: 'epoch' }, { $setOnInsert: { epoch: randomBytes(8).toString('hex') } }, { upsert: true });
  await outbox(db).createIndex({ project: 1, _id: 1 }, { name: 'project_seq' });
}

/**
 * Appends `event` inside the caller's transaction (`session`): the write and its event commit
 * together or not at all. Returns its position. Two updates and one insert.
 */
export async function appendMongoEvent(db: Db, session: ClientSession, event: ChangeEventInput): Promise<number> {
  const counter = await meta(db).findOneAndUpdate({ _id: 'seq' }, { $inc: { seq: 1 } }, { upsert: true, returnDocument: 'after', session });
  const seq = counter!.seq!;
  const head = await meta(db).findOneAndUpdate({ _id: `head:${event.project}/${event.collection}` }, { $set: { seq } }, { upsert: true, returnDocument: 'before', session });
  await outbox(db).insertOne(
    { _id: seq, prev: seq - 1, cprev: head?.seq ?? 0, project: event.project, collection: event.collection, committed_at: event.committed_at, payload: JSON.stringify(event) },
    { session },
  );
  return seq;
}

/** Runs `write` in a transaction and appends `event` in it when `happened` says the write was made. */
export async function writeWithEvent<T>(db: Db, options: TransactionOptions, event: ChangeEventInput, write: (session: ClientSession) => Promise<T>, happened: (result: T) => boolean): Promise<T> {
  const session = db.client.startSession();
  try {
    return await session.withTransaction(async () => {
      const result = await write(session);
      if (happened(result)) await appendMongoEvent(db, session, event);
      return result;
    }, options);
  } finally {
    await session.endSession();
  }
}

/** The outbox as the relay reads it. */
export class MongoOutboxSource implements OutboxSource {
  constructor(private readonly db: Db) {}

  async epoch(): Promise<string> {
    return (await meta(this.db).findOne({ _id: 'epoch' }))?.epoch ?? '';
  }

  async rowsAfter(after: number, limit: number): Promise<OutboxRow[]> {
    const docs = await outbox(this.db).find({ _id: { $gt: after } }).sort({ _id: 1 }).limit(limit).toArray();
    return docs.map(({ _id, ...rest }) => ({ seq: _id, ...rest }));
  }

  async oldest(): Promise<{ seq: number; prev: number } | null> {
    const [doc] = await outbox(this.db).find({}).sort({ _id: 1 }).limit(1).toArray();
    return doc ? { seq: doc._id, prev: doc.prev } : null;
  }

  async head(): Promise<number> {
    return (await meta(this.db).findOne({ _id: 'seq' }))?.seq ?? 0;
  }

  async close(): Promise<void> {}
}

/**
 * A deleted project: its rows go (they carry record data), and a marker row (collection '') is
 * appended whose position is the purge point (the relay copies it; readers resync from below).
 */
export async function purgeMongoOutbox(db: Db, project: ProjectId): Promise<number> {
  const session = db.client.startSession();
  try {
    return await session.withTransaction(async () => {
      const through = await appendMongoEvent(db, session, { project, collection: '', kind: 'collection', revision: null, committed_at: Date.now() });
      await outbox(db).deleteMany({ project, _id: { $lt: through } }, { session });
      await meta(db).deleteMany({ _id: { $regex: `^head:${escapeRegex(project)}/` } }, { session });
      return through;
    });
  } finally {
    await session.endSession();
  }
}

/** Drops rows beyond the retention: older than `maxAgeMs`, or more than `maxEvents` behind the head. */
export async function trimMongoOutbox(db: Db, retention: EventRetention, now = Date.now()): Promise<void> {
  const head = (await meta(db).findOne({ _id: 'seq' }))?.seq ?? 0;
  await outbox(db).deleteMany({ $or: [{ _id: { $lte: head - retention.maxEvents } }, { committed_at: { $lt: now - retention.maxAgeMs } }] });
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The outbox of `db` as the relay reads it, and its upkeep. */
export interface MongoOutboxLog {
  source: MongoOutboxSource;
  purge: (project: ProjectId) => Promise<number>;
  trim: (retention: EventRetention) => Promise<void>;
}

export function mongoOutboxLog(db: Db): MongoOutboxLog {
  return { source: new MongoOutboxSource(db), purge: (p) => purgeMongoOutbox(db, p), trim: (r) => trimMongoOutbox(db, r) };
}
