/**
 * The common JSON body, read without body-parser's per-request machinery: `Content-Type:
 * application/json` (no charset, or utf-8), no `Content-Encoding`, a `Content-Length` within the
 * limit. Everything body-parser would do to such a body is done the same way — the size limit,
 * the nesting limit (a byte scan before parsing), a leading BOM dropped, an empty body read as
 * `{}`, a body that does not start with `{` or `[` refused — and fails with the same error
 * `type`s, so the error handler answers exactly as it did. Any other body (compressed, another
 * charset, chunked, over the limit, a form) is left to the body-parser chain. Reading and
 * parsing through body-parser measured 10–15 % of a create with two workers.
 */
import type { Request } from 'express';
import { BodyTooDeepError, MAX_BODY_DEPTH, jsonDepthViolation } from './body-parsing';
import { readRawBody } from './internal-body';

/** Limit of a body read this way, in bytes (body-parser's `1mb`; readRawBody's limit). */
const LIMIT_BYTES = 1024 * 1024;

/** An error as body-parser raises it (`type`, `status`), for the error handler. */
function bodyError(type: string, status: number, message: string): Error {
  return Object.assign(new Error(message), { type, status, statusCode: status, expose: true });
}

/** Whether `req` carries a body this reader takes (see above). */
export function isPlainJsonBody(req: Request): boolean {
  const h = req.headers;
  const type = h['content-type'];
  if (type === undefined) return false;
  const t = type.toLowerCase();
  if (t !== 'application/json' && t !== 'application/json; charset=utf-8' && t !== 'application/json;charset=utf-8') return false;
  const encoding = h['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  if (h['transfer-encoding'] !== undefined) return false;
  const length = h['content-length'];
  return length !== undefined && /^\d{1,7}$/.test(length) && Number(length) <= LIMIT_BYTES;
}

/** `req.body` from the bytes of a plain JSON body, or the error body-parser would raise. */
function parsePlainJson(req: Request, buf: Buffer): unknown {
  const deep = jsonDepthViolation(buf, MAX_BODY_DEPTH);
  if (deep) return Object.assign(new BodyTooDeepError(deep), { status: 400 });
  let text = buf.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length === 0) {
    // An empty body is `{}`, as body-parser reads it.
    req.body = {};
    return undefined;
  }
  const first = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d])/.exec(text)?.[1];
  if (first !== '{' && first !== '[') return bodyError('entity.parse.failed', 400, 'Unexpected token in JSON body');
  try {
    req.body = JSON.parse(text) as unknown;
    return undefined;
  } catch {
    return bodyError('entity.parse.failed', 400, 'Malformed JSON body');
  }
}

/** Reads and parses the body of a request isPlainJsonBody accepted into `req.body`, then `next`. */
export function readPlainJsonBody(req: Request, next: (err?: unknown) => void): void {
  readRawBody(req).then(
    (buf) => next(parsePlainJson(req, buf)),
    (err: unknown) => {
      // A body cut off before its end is a client's mistake, as body-parser says it.
      const premature = (err as { code?: unknown } | null)?.code === 'ERR_STREAM_PREMATURE_CLOSE';
      next(premature ? bodyError('request.aborted', 400, 'request aborted') : err);
    },
  );
}
