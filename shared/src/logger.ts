import pino, { type Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import type { RequestHandler } from 'express';

/**
 * Paths pino removes from every log line: credentials in headers, and anything named like a
 * password or token in bodies we might log. Nothing ever logs a password or its hash.
 */
const REDACT = [
  'req.headers.authorization',
  'req.headers["x-plinth-internal"]',
  'req.headers["x-db-user-token"]',
  'req.headers["x-auth-user-token"]',
  'req.headers.cookie',
  '*.password',
  '*.password_hash',
  '*.passwordHash',
  '*.refresh_token',
  '*.token',
];

export function createLogger(name: string, level = 'info'): Logger {
  return pino({ name, level, redact: { paths: REDACT, censor: '[redacted]' } });
}

/**
 * Request logging with the request id; health and metrics probes are not logged. Request lines
 * are logged at `info`: below that level the middleware is not installed at all (it costs ~10 %
 * of a cheap request even when every line is dropped).
 */
export function httpLogger(logger: Logger): RequestHandler {
  if (!logger.isLevelEnabled('info')) return (_req, _res, next) => next();
  return pinoHttp({
    logger,
    genReqId: (req) => String(req.headers['x-request-id'] ?? ''),
    autoLogging: { ignore: (req) => /^\/(healthz|readyz|metrics)$/.test(req.url ?? '') },
    serializers: {
      req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  });
}
