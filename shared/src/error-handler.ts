import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { fromDependencyError } from './dependency-errors';
import { BodyTooDeepError, MAX_BODY_DEPTH } from './body-parsing';
import { InternalError, NotFoundError, PayloadTooLargeError, PlinthError, InvalidRequestError, UnsupportedMediaTypeError } from './errors';

/** Errors raised by body-parser / raw-body carry a `type` and an HTTP `status`. */
interface BodyParserError {
  type?: string;
  status?: number;
  statusCode?: number;
}

function fromBodyParser(err: unknown): PlinthError | null {
  if (typeof err !== 'object' || err === null) return null;
  const e = err as BodyParserError;
  switch (e.type) {
    case 'entity.too.large':
      return new PayloadTooLargeError();
    case 'entity.parse.failed':
      return new InvalidRequestError('Request body is not valid JSON.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new UnsupportedMediaTypeError('Unsupported body encoding or charset.');
    case 'entity.too.deep': {
      const path = err instanceof BodyTooDeepError && err.path.length > 0 ? err.path.join('.') : 'body';
      return new InvalidRequestError(`The JSON body is nested deeper than ${MAX_BODY_DEPTH} levels, in "${path}".`, {
        field: path,
        reason: 'too_deep',
        limit: MAX_BODY_DEPTH,
      });
    }
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
    case 'parameters.too.many':
      return new InvalidRequestError('The request body could not be read.');
    default:
      return fromClientErrorStatus(e);
  }
}

/**
 * Other errors that express, its router and body-parser mark as the client's fault (an
 * `http-errors` 4xx: a path segment that is not valid percent-encoding, a corrupt gzip, deflate
 * or br body…): the envelope of that status with a generic message, never a 500.
 */
function fromClientErrorStatus(e: BodyParserError): PlinthError | null {
  const status = e.status ?? e.statusCode;
  if (status === undefined || status < 400 || status > 499) return null;
  if (status === 413) return new PayloadTooLargeError();
  if (status === 415) return new UnsupportedMediaTypeError();
  if (e instanceof URIError) return new InvalidRequestError('The request path is not valid percent-encoding.');
  return new InvalidRequestError('The request could not be read: a malformed path, or a body that could not be decoded.');
}

/** Turns any error into a PlinthError; anything unknown becomes a 500 that hides its cause. */
export function toPlinthError(err: unknown): PlinthError {
  if (err instanceof PlinthError) return err;
  return fromBodyParser(err) ?? fromDependencyError(err) ?? new InternalError();
}

/**
 * The last middleware of every app: renders the envelope. 500s are logged with their cause and
 * the request id; the client only sees "Something went wrong".
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const perr = toPlinthError(err);
    if (perr.status === 500) {
      logger.error({ err, req_id: req.headers['x-request-id'] }, 'request failed');
    } else if (perr.status > 500 && perr.code !== 'overloaded') {
      // A refusal at admission is the server protecting itself, not a fault: under a spike most
      // answers are refusals, and a log line each would spend what the refusal saved.
      logger.warn({ err: err instanceof Error ? err.message : String(err), req_id: req.headers['x-request-id'] }, 'dependency unavailable');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (perr.headers) res.set(perr.headers);
    res.status(perr.status).json(perr.toEnvelope());
  };
}

/** JSON 404 for every route nobody answered. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new NotFoundError(`No route for ${req.method} ${req.path}.`));
};
