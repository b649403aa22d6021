import type { RequestHandler } from 'express';
import { RequestTimeoutError } from '@plinth/shared';

/**
 * Bounds the time a client may take to send its request body (slow-body / slowloris
 * protection): a request whose body has not fully arrived `timeoutMs` after its headers is
 * answered 408 `request_timeout` (the envelope, `Connection: close`) and its connection closed,
 * so nothing downstream — a parser, an upstream socket — waits on it any longer.
 */
export function bodyDeadline(timeoutMs: number): RequestHandler {
  return (req, res, next) => {
    const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    if (!hasBody || req.readableEnded || timeoutMs <= 0) return next();
    const timer = setTimeout(() => {
      if (req.readableEnded) return;
      // 'aborted' is what a proxy (http-proxy) and body parsers listen for to give up on the
      // request: the upstream socket it holds is released at once, not after its own timeout.
      const abandon = () => {
        req.emit('aborted');
        // Half-close first so the client reads the 408 (an immediate reset could discard it
        // while the client is still sending), then make sure the socket goes.
        req.socket.end();
        setTimeout(() => req.socket.destroy(), 2000).unref();
      };
      if (res.headersSent) return abandon();
      const err = new RequestTimeoutError(`The request body did not arrive within ${timeoutMs} ms.`, { timeout_ms: timeoutMs });
      res.status(err.status).set('Connection', 'close').json(err.toEnvelope());
      res.once('finish', abandon);
    }, timeoutMs);
    timer.unref();
    const clear = () => clearTimeout(timer);
    req.once('end', clear);
    req.once('close', clear);
    res.once('close', clear);
    next();
  };
}
