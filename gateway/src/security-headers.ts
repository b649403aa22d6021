import type { Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';

/**
 * helmet's default security headers, set in one step. With its defaults every header helmet
 * sets is the same on every response (no nonce, nothing read from the request), yet helmet runs
 * them as a dozen middlewares chained one after the other on each request. Here helmet runs
 * once, at start-up, against a response that only records what it is given, and each request
 * gets the recorded headers, in helmet's order.
 */
export function securityHeaders(): RequestHandler {
  const headers: Array<[string, string]> = [];
  const recorder = {
    setHeader: (name: string, value: string) => headers.push([name, value]),
    // X-Powered-By: the gateway disables it (app.disable), so there is nothing to remove.
    removeHeader: () => {},
  };
  let finished = false;
  void helmet()({} as Request, recorder as unknown as Response, (err?: unknown) => {
    if (err) throw err;
    finished = true;
  });
  // helmet's defaults are synchronous; a version that is not would leave the list incomplete.
  if (!finished) throw new Error('helmet did not set its headers synchronously');
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}
