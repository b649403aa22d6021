/**
 * Sends a stored file (docs/files.md "Downloading"): streamed from storage, never buffered,
 * with `Content-Length`, one byte range (`Range`, `If-Range`), a strong `ETag` from the SHA-256
 * (`If-None-Match` → 304), and on every response the headers that keep user content from
 * acting as our origin: `X-Content-Type-Options: nosniff`, `Content-Security-Policy: sandbox`,
 * and `Content-Disposition: attachment` for every type not in the inline list (HTML and SVG
 * never are).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { NotFoundError } from '@plinth/shared';
import type { FileMeta } from './file-field';
import type { ByteRange, FileKey, FileStorage } from './storage/file-storage';
import { INLINE_TYPES } from './sniff';

/** On every file response, success or error. */
export const FILE_SECURITY_HEADERS: Readonly<{ [name: string]: string }> = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'",
  'Cross-Origin-Resource-Policy': 'same-site',
};

export type RangeAnswer = { kind: 'whole' } | { kind: 'range'; range: ByteRange } | { kind: 'unsatisfiable' };

/** One `bytes=` range of an object of `size` bytes; several ranges or a malformed header → the whole object. */
export function parseRange(header: string | undefined, size: number): RangeAnswer {
  if (!header) return { kind: 'whole' };
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return { kind: 'whole' };
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return { kind: 'unsatisfiable' };
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== '' && Number(m[2]) < start) return { kind: 'whole' };
  }
  if (!Number.isSafeInteger(start) || start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'range', range: { start, end } };
}

export function etagOf(meta: Pick<FileMeta, 'sha256'>): string {
  return `"${meta.sha256.slice(0, 40)}"`;
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const v = t.trim().replace(/^W\//, '');
    return v === '*' || v === etag;
  });
}

/** `Content-Type` with a charset for text, so a browser never guesses one. */
function contentType(type: string): string {
  return type.startsWith('text/') || type === 'application/json' || type === 'image/svg+xml' ? `${type}; charset=utf-8` : type;
}

export async function sendFile(req: IncomingMessage, res: ServerResponse, storage: FileStorage, key: FileKey, meta: FileMeta): Promise<void> {
  for (const [k, v] of Object.entries(FILE_SECURITY_HEADERS)) res.setHeader(k, v);
  const etag = etagOf(meta);
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', 'private, no-cache');
  res.setHeader('Accept-Ranges', 'bytes');
  if (matchesEtag(req.headers['if-none-match'], etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  const ifRange = req.headers['if-range'];
  const answer = ifRange && ifRange !== etag ? ({ kind: 'whole' } as const) : parseRange(req.headers.range, meta.size);
  if (answer.kind === 'unsatisfiable') {
    res.statusCode = 416;
    res.setHeader('Content-Range', `bytes */${meta.size}`);
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ error: 'invalid_request', message: 'The range is outside the file.' }));
    return;
  }
  const range = answer.kind === 'range' ? answer.range : undefined;
  const body = meta.size === 0 ? null : await storage.get(key, range);
  if (meta.size !== 0 && !body) throw new NotFoundError('File not found.');
  res.setHeader('Content-Type', contentType(meta.type));
  res.setHeader('Content-Disposition', `${INLINE_TYPES.has(meta.type) ? 'inline' : 'attachment'}; filename="${meta.name}"`);
  if (range) {
    res.statusCode = 206;
    res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${meta.size}`);
    res.setHeader('Content-Length', String(range.end - range.start + 1));
  } else {
    res.statusCode = 200;
    res.setHeader('Content-Length', String(meta.size));
  }
  if (req.method === 'HEAD' || !body) {
    body?.destroy();
    res.end();
    return;
  }
  try {
    await pipeline(body, res);
  } catch {
    // The client went away mid-download: the pipeline already closed the storage stream.
    body.destroy();
  }
}
