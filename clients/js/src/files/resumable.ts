import { isNetworkError, PlinthError } from '../errors';
import { sleep, type CallOptions } from '../transport';
import type { RecordsContext } from '../records/context';
import type { UploadProgress } from './types';

/** A resumable upload session as the server describes it (docs/files.md "Resumable uploads"). */
export interface UploadSessionInfo {
  id: string;
  collection: string;
  record_id: string;
  field: string;
  name: string;
  size: number;
  part_size: number;
  parts: number;
  expires_at: string;
}

export interface ResumableOptions extends CallOptions {
  /** Continue this session (from `ResumableUploadError.uploadId`) instead of opening a new one. */
  uploadId?: string;
  /** Called after each part with the bytes the server holds. */
  onProgress?: (progress: UploadProgress) => void;
  /** Tells the session's id as soon as it is open (keep it to resume after a reload). */
  onSession?: (session: UploadSessionInfo) => void;
  /** How many times one part is sent again after a network error (default 3). */
  retries?: number;
}

/** A resumable upload that stopped (network gone past the retries): pass `uploadId` to resume it. */
export class ResumableUploadError extends PlinthError {
  constructor(
    readonly uploadId: string,
    cause: PlinthError,
  ) {
    super({ status: cause.status, code: cause.code, message: `${cause.message} The upload can be resumed with uploadId ${uploadId}.`, details: cause.details, requestId: cause.requestId, cause });
  }
}

async function headers(ctx: RecordsContext, signal?: AbortSignal): Promise<Record<string, string>> {
  const token = await ctx.token(signal);
  return token ? { 'X-Db-User-Token': token } : {};
}

/**
 * Sends `file` to the record's file field in parts (each its own request), then attaches it
 * under the record's update rule; resolves the updated record. A part that fails on the network
 * is sent again; past the retries a `ResumableUploadError` names the session, and calling again
 * with `uploadId` sends only the parts the server does not hold yet.
 */
export async function uploadResumable<R>(ctx: RecordsContext, collection: string, recordId: string, field: string, file: Blob, opts: ResumableOptions = {}): Promise<R> {
  const base = '/files/uploads';
  let session: UploadSessionInfo;
  let received: number[] = [];
  if (opts.uploadId) {
    const res = await ctx.transport.request<{ upload: UploadSessionInfo; received: number[] }>({ method: 'GET', path: `${base}/${encodeURIComponent(opts.uploadId)}`, headers: await headers(ctx, opts.signal), signal: opts.signal });
    session = res.upload;
    received = res.received;
    if (session.size !== file.size) throw new TypeError(`Plinth: upload ${session.id} is of ${session.size} bytes, this file has ${file.size}.`);
  } else {
    const name = (file as { name?: unknown }).name;
    const body = { collection, record_id: recordId, field, name: typeof name === 'string' && name ? name : field, size: file.size };
    session = (await ctx.transport.request<{ upload: UploadSessionInfo }>({ method: 'POST', path: base, body, headers: await headers(ctx, opts.signal), signal: opts.signal })).upload;
  }
  opts.onSession?.(session);
  const have = new Set(received);
  const held = () => [...have].reduce((n, p) => n + Math.min(session.part_size, session.size - (p - 1) * session.part_size), 0);
  try {
    for (let n = 1; n <= session.parts; n++) {
      if (have.has(n)) continue;
      const part = file.slice((n - 1) * session.part_size, Math.min(n * session.part_size, session.size));
      for (let attempt = 0; ; attempt++) {
        try {
          await ctx.transport.request({ method: 'PUT', path: `${base}/${session.id}/parts/${n}`, payload: part, headers: { ...(await headers(ctx, opts.signal)), 'Content-Type': 'application/octet-stream' }, signal: opts.signal });
          break;
        } catch (err) {
          if (!isNetworkError(err) || attempt >= (opts.retries ?? 3)) throw err;
          await sleep(200 * 2 ** attempt, opts.signal);
        }
      }
      have.add(n);
      opts.onProgress?.({ loaded: held(), total: session.size });
    }
    const done = await ctx.transport.request<{ record: R }>({ method: 'POST', path: `${base}/${session.id}/complete`, body: {}, headers: await headers(ctx, opts.signal), signal: opts.signal });
    return done.record;
  } catch (err) {
    if (err instanceof PlinthError && isNetworkError(err)) throw new ResumableUploadError(session.id, err);
    throw err;
  }
}
