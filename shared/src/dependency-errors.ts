import { InsufficientStorageError, UnavailableError, type PlinthError } from './errors';
import { isRedisUnavailable } from './redis';

/** SQLite result codes that mean the disk cannot take the write (better-sqlite3's `err.code`). */
const DISK_FULL_CODES = new Set(['SQLITE_FULL']);
/** SQLite codes that mean storage trouble the client can only wait out. */
const STORAGE_UNAVAILABLE = /^SQLITE_(IOERR|READONLY|BUSY|LOCKED|CANTOPEN|PROTOCOL)/;

function sqliteCode(err: unknown): string | null {
  if (!(err instanceof Error) || err.name !== 'SqliteError') return null;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : null;
}

/** True when `err` is SQLite saying the disk is full. Readiness checks use it too. */
export function isDiskFull(err: unknown): boolean {
  const code = sqliteCode(err);
  return code !== null && DISK_FULL_CODES.has(code);
}

/** Driver errors that mean MongoDB cannot serve right now (no server to select, a lost connection). */
const MONGO_UNREACHABLE = new Set(['MongoServerSelectionError', 'MongoNetworkError', 'MongoNetworkTimeoutError']);
/** MaxTimeMSExpired (a commit past maxCommitTimeMS, an operation past maxTimeMS) and WriteConcernFailed (wtimeout). */
const MONGO_TIME_LIMIT_CODES = new Set([50, 64]);

/**
 * MongoDB unreachable, or a write it did not confirm in time. Read by name and code, so a
 * process without MongoDB never loads the driver to ask.
 */
function isMongoUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (MONGO_UNREACHABLE.has(err.name)) return true;
  if (err.name !== 'MongoServerError' && err.name !== 'MongoWriteConcernError') return false;
  const e = err as { code?: unknown; writeConcernError?: { code?: unknown } };
  return MONGO_TIME_LIMIT_CODES.has(e.code as number) || MONGO_TIME_LIMIT_CODES.has(e.writeConcernError?.code as number);
}

/**
 * Errors of a dependency (Redis, MongoDB, the disk) turned into what the client should see: a
 * full disk is 507 `insufficient_storage`, Redis, MongoDB or storage that cannot serve right now
 * (or did not confirm a write in time) is 503 `unavailable`. Null for anything else.
 */
export function fromDependencyError(err: unknown): PlinthError | null {
  if (isRedisUnavailable(err)) return new UnavailableError('A data store (Redis) is unavailable; try again shortly.');
  if (isMongoUnavailable(err)) return new UnavailableError('The database (MongoDB) did not answer or confirm the write in time; try again shortly.');
  if (isDiskFull(err)) return new InsufficientStorageError();
  const code = sqliteCode(err);
  if (code !== null && STORAGE_UNAVAILABLE.test(code)) return new UnavailableError('Storage is unavailable; try again shortly.');
  return null;
}
