/**
 * The one body handler of every app (services, and the gateway's operator API): a request with no
 * body (neither Content-Length nor Transfer-Encoding) passes straight on; a plain JSON body is
 * read by json-body-fast.ts; anything else goes through the body-parser chain (body-parsing.ts:
 * JSON, form, then 415). The answers are those of the chain alone, for every body.
 */
import type { RequestHandler } from 'express';
import { bodyParsers } from './body-parsing';
import { isPlainJsonBody, readPlainJsonBody } from './json-body-fast';

/** Runs `handlers` one after another as one handler, stopping at the first error. */
export function runInOrder(handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let i = 0;
    const step = (err?: unknown): void => {
      const handler = handlers[i++];
      if (err || !handler) next(err);
      else void handler(req, res, step);
    };
    step();
  };
}

export function parseBody(): RequestHandler {
  const chain = runInOrder(bodyParsers());
  return (req, res, next) => {
    // No body (a GET, a DELETE): every parser would skip it one by one, leaving `req.body` unset.
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
      next();
      return;
    }
    if (isPlainJsonBody(req)) readPlainJsonBody(req, next);
    else chain(req, res, next);
  };
}
