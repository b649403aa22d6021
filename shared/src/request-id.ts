import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A usable request id from a header value, or null when absent or unsafe to echo. */
export function acceptRequestId(value: string | string[] | undefined): string | null {
  return typeof value === 'string' && SAFE_ID.test(value) ? value : null;
}

/**
 * Keeps a caller's well-formed `X-Request-Id` (or makes one), puts it on the request headers so
 * logs and upstreams see it, and echoes it on the response.
 */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    const id = acceptRequestId(req.headers['x-request-id']) ?? randomUUID();
    req.headers['x-request-id'] = id;
    res.setHeader('X-Request-Id', id);
    next();
  };
}
