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

/**
 * Errors of a dependency (Redis, the disk) turned into what the client should see: a full disk
 * is 507 `insufficient_storage`, Redis or storage that cannot serve right now is 503
 * `unavailable`. Null for anything else.
 */
export function fromDependencyError(err: unknown): PlinthError | null {
  if (isRedisUnavailable(err)) return new UnavailableError('A data store (Redis) is unavailable; try again shortly.');
  if (isDiskFull(err)) return new InsufficientStorageError();
  const code = sqliteCode(err);
  if (code !== null && STORAGE_UNAVAILABLE.test(code)) return new UnavailableError('Storage is unavailable; try again shortly.');
  return null;
}
