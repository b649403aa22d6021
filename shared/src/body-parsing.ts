/**
 * Request bodies for every app (services and the gateway's operator API): JSON and form bodies
 * up to 1 MiB, gzip / deflate / br accepted, JSON nested at most MAX_BODY_DEPTH levels, and a
 * body of any other type refused with 415 instead of being silently ignored. Malformed input of
 * every kind becomes a 4xx in the error handler (error-handler.ts), never a 500.
 */
import express, { type Request, type RequestHandler } from 'express';
import { UnsupportedMediaTypeError } from './errors';

export const BODY_LIMIT = '1mb';
/** Deepest nesting of arrays and objects a JSON body may have. */
export const MAX_BODY_DEPTH = 64;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

function keyText(buf: Uint8Array, start: number, end: number): string {
  const raw = Buffer.from(buf.buffer, buf.byteOffset + start, end - start + 1).toString('utf8');
  try {
    return String(JSON.parse(raw));
  } catch {
    return raw.slice(1, -1);
  }
}

/**
 * Where the JSON text in `buf` first nests arrays and objects deeper than `max`: the object keys
 * leading there (e.g. `["data", "meta"]`), or null when it never does. A byte scan that skips
 * strings; it runs before JSON.parse, so nothing ever recurses over a hostile body.
 */
export function jsonDepthViolation(buf: Uint8Array, max: number): string[] | null {
  let depth = 0;
  let inString = false;
  let stringStart = -1;
  let lastString: [number, number] = [-1, -1];
  // keyAt[d]: the key whose value is being read at depth d (set by ':'), as [start, end] or null.
  const keyAt: Array<[number, number] | null> = [null];
  // opened[d]: the key under which the container at depth d+1 was opened.
  const opened: Array<[number, number] | null> = [];
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) {
        inString = false;
        lastString = [stringStart, i];
      }
    } else if (c === QUOTE) {
      inString = true;
      stringStart = i;
    } else if (c === COLON) {
      keyAt[depth] = lastString;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      opened.push(keyAt[depth] ?? null);
      keyAt[++depth] = null;
      if (depth > max) return opened.filter((k): k is [number, number] => k !== null).map(([a, b]) => keyText(buf, a, b));
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      opened.pop();
      depth--;
    }
  }
  return null;
}

/** A body-parser `verify` error: the error handler answers 400 naming where it is too deep. */
export class BodyTooDeepError extends Error {
  readonly type = 'entity.too.deep';
  constructor(readonly path: string[]) {
    super(`JSON body nested deeper than ${MAX_BODY_DEPTH} levels`);
  }
}

/** express.json with the size and depth limits. */
export function jsonBody(): RequestHandler {
  return express.json({
    limit: BODY_LIMIT,
    verify: (_req, _res, buf) => {
      const path = jsonDepthViolation(buf, MAX_BODY_DEPTH);
      if (path) throw new BodyTooDeepError(path);
    },
  });
}

/** Form-encoded bodies (the contract's collection creation), same size limit. */
export function formBody(): RequestHandler {
  return express.urlencoded({ limit: BODY_LIMIT, extended: false });
}

/**
 * After the parsers: a request that carries a body none of them read (text/plain, XML, no
 * Content-Type…) is 415, so a client learns its body was not understood.
 */
export const refuseUnreadBody: RequestHandler = (req, _res, next) => {
  // A parser that read the body consumed the stream; an unread body is still pending.
  const read = req.readableEnded;
  const length = req.headers['content-length'];
  const hasBody = length !== undefined ? length !== '0' : req.headers['transfer-encoding'] !== undefined;
  next(!read && hasBody ? new UnsupportedMediaTypeError('Send the body as JSON with Content-Type: application/json.') : undefined);
};

/** Which requests may send a form-encoded body. */
export type AcceptsForm = (req: Request) => boolean;

/**
 * Every body parser of an app, in order: JSON, form (only for the requests `acceptsForm` names),
 * then 415 for anything else. A form body sent where JSON is expected is refused before it is
 * parsed: parsed, `curl -d '{"password":…}'` would turn the whole JSON text into one parameter
 * name, and a validation error naming that parameter would echo the password.
 */
export function bodyParsers(acceptsForm: AcceptsForm = () => false): RequestHandler[] {
  const form = formBody();
  const formWhereAccepted: RequestHandler = (req, res, next) => (acceptsForm(req) ? form(req, res, next) : next());
  return [jsonBody(), formWhereAccepted, refuseUnreadBody];
}
