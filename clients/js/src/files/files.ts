import type { CallOptions } from '../transport';
import type { RecordsContext } from '../records/context';
import type { FileMeta, FileToken, FileUrlOptions } from './types';

/** The files of a record's field: one for `file`, the list for `files`, none when empty or not a file field. */
export function filesOf(record: object, field: string): FileMeta[] {
  const v = (record as Record<string, unknown>)[field];
  const list = Array.isArray(v) ? v : v ? [v] : [];
  return list.filter((f): f is FileMeta => typeof f === 'object' && f !== null && typeof (f as FileMeta).name === 'string');
}

/**
 * The download URL of a file a record holds: `{url}/v1/projects/{p}/files/{collection}/{id}/{name}`,
 * with `?thumb=` and `?token=` when given. `name` defaults to the field's (first) file; a name
 * the field does not hold is a TypeError, so a typo fails here rather than as a 404 later.
 */
export function fileUrl(ctx: RecordsContext, collection: string, record: { id: string }, field: string, name?: string | FileMeta, opts: FileUrlOptions = {}): string {
  const held = filesOf(record, field);
  const wanted = typeof name === 'object' ? name.name : name ?? held[0]?.name;
  if (!wanted || !held.some((f) => f.name === wanted)) throw new TypeError(`Plinth: the record's field "${field}" holds no file ${wanted ? `"${wanted}"` : ''}.`.replace(' .', '.'));
  let url = ctx.transport.endpoint(`/files/${encodeURIComponent(collection)}/${encodeURIComponent(record.id)}/${encodeURIComponent(wanted)}`);
  const q = new URLSearchParams();
  if (opts.thumb) q.set('thumb', opts.thumb);
  if (opts.token) q.set('token', typeof opts.token === 'string' ? opts.token : opts.token.token);
  const s = q.toString();
  if (s) url += `?${s}`;
  return url;
}

export interface FileTokenOptions extends CallOptions {
  /** Seconds the token lives, 1 to 300 (the default). */
  ttlSeconds?: number;
}

/** A short-lived file token for the signed-in user (or the key alone), for `fileUrl(…, { token })`. */
export async function fileToken(ctx: RecordsContext, opts: FileTokenOptions = {}): Promise<FileToken> {
  const token = await ctx.token(opts.signal);
  return ctx.transport.request<FileToken>({
    method: 'POST',
    path: '/files/token',
    body: opts.ttlSeconds === undefined ? {} : { ttl_seconds: opts.ttlSeconds },
    headers: token ? { 'X-Db-User-Token': token } : {},
    signal: opts.signal,
  });
}
