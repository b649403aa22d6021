/**
 * The one body handler of every app (services, and the gateway's operator API): a request with no
 * body (neither Content-Length nor Transfer-Encoding) passes straight on; a plain JSON body is
 * read by json-body-fast.ts; anything else goes through the body-parser chain (body-parsing.ts:
 * JSON, form where `acceptsForm` allows it, then 415). The answers are those of the chain alone, for every body.
 */
import type { RequestHandler } from 'express';
import { bodyParsers, type AcceptsForm } from './body-parsing';
import { isPlainJsonBody, readPlainJsonBody } from './json-body-fast';
import { runInOrder } from './run-in-order';

export function parseBody(acceptsForm?: AcceptsForm): RequestHandler {
  const chain = runInOrder(bodyParsers(acceptsForm));
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
