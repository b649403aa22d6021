import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { RequestHandler } from 'express';
import { PayloadTooLargeError, UnauthorizedError } from './errors';
import { bodyDigest, isInProcess } from './internal-auth';

/** Raw bodies are limited to 1 MiB (docs/api-conventions.md "Errors"), like parsed ones. */
const BODY_LIMIT_BYTES = 1024 * 1024;

/** Where requireInternal leaves the body digest the credential was signed for. */
export const SIGNED_DIGEST = 'plinthSignedDigest';

const EMPTY = Buffer.alloc(0);

/**
 * A request body as sent (still encoded), at most 1 MiB (else 413, and the request is destroyed);
 * empty when there is none. An HTTP request with neither Content-Length nor Transfer-Encoding
 * has no body, so it is not read at all. Listeners, not `for await`: the async iterator cost a
 * measurable share of a proxied request.
 */
export function readRawBody(req: Readable): Promise<Buffer> {
  const headers = (req as Readable & { headers?: IncomingHttpHeaders }).headers;
  if (headers && headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) return Promise.resolve(EMPTY);
  // Already read to its end by someone else: nothing is left to read.
  if (req.readableEnded) return Promise.resolve(EMPTY);
  const premature = (): Error => Object.assign(new Error('The request body ended before it was complete.'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
  if (req.destroyed) return Promise.reject(premature());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (err: unknown, body?: Buffer): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', settle);
      req.off('aborted', onAborted);
      req.off('close', onClose);
      if (err) reject(err);
      else resolve(body as Buffer);
    };
    const onData = (chunk: Buffer | string): void => {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      size += buf.length;
      // Compressed bodies are limited again once inflated, by the parsers.
      if (size > BODY_LIMIT_BYTES) {
        settle(new PayloadTooLargeError());
        req.destroy();
        return;
      }
      chunks.push(buf);
    };
    const onEnd = (): void => settle(undefined, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    const onAborted = (): void => settle(premature());
    const onClose = (): void => {
      if (!req.readableEnded) settle(premature());
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', settle);
    req.on('aborted', onAborted);
    req.on('close', onClose);
  });
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
          // What the parsers may decide on (a form body is accepted on some paths only).
          path: req.path,
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
