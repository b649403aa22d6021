import { Readable } from 'node:stream';
import type { RequestHandler } from 'express';
import { PayloadTooLargeError, UnauthorizedError } from './errors';
import { bodyDigest, isInProcess } from './internal-auth';

/** Raw bodies are limited to 1 MiB (DESIGN.md §8), like parsed ones. */
const BODY_LIMIT_BYTES = 1024 * 1024;

/** Where requireInternal leaves the body digest the credential was signed for. */
export const SIGNED_DIGEST = 'plinthSignedDigest';

/** A request body as sent (still encoded), at most 1 MiB (else 413); empty when there is none. */
export async function readRawBody(req: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    size += buf.length;
    // Compressed bodies are limited again once inflated, by the parsers.
    if (size > BODY_LIMIT_BYTES) throw new PayloadTooLargeError();
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

/**
 * Runs the body parsers (`parse`). A request that crossed the network (cluster mode) is read
 * raw first and its SHA-256 compared with the digest its internal credential was signed for, so
 * a captured credential cannot carry another body; the parsers then read that same buffer. A
 * request handed over in-process (standalone) is parsed directly.
 */
export function internalBodyParser(parse: RequestHandler): RequestHandler {
  return (req, res, next) => {
    if (isInProcess(req)) return parse(req, res, next);
    const signed = res.locals[SIGNED_DIGEST] as string | undefined;
    readRawBody(req).then(
      (raw) => {
        if (signed === undefined || bodyDigest(raw) !== signed) {
          next(new UnauthorizedError('This service only accepts requests from the Plinth gateway.'));
          return;
        }
        // The parsers read a stream: hand them the verified bytes with the request's headers.
        const replay = Object.assign(Readable.from(raw.length > 0 ? [raw] : []), {
          headers: req.headers,
          method: req.method,
          url: req.url,
          socket: req.socket,
        });
        Object.defineProperty(replay, 'complete', { get: () => replay.readableEnded });
        const fake = replay as unknown as typeof req;
        parse(fake, res, (err?: unknown) => {
          if (!err) req.body = (replay as unknown as { body?: unknown }).body;
          next(err);
        });
      },
      (err: unknown) => next(err),
    );
  };
}
