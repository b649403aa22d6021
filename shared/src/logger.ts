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

/** A logger with the redactions; `destination` (default stdout) is where its lines go, e.g. a test's capture. */
export function createLogger(name: string, level = 'info', destination?: pino.DestinationStream): Logger {
  const options = { name, level, redact: { paths: REDACT, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * The URL as logged: the path, and the names of the query parameters without their values
 * (`where`, `cursor`, `to`, keys… may carry personal data or secrets).
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const names = url
    .slice(q + 1)
    .split('&')
    .filter(Boolean)
    .map((part) => {
      const eq = part.indexOf('=');
      return `${eq < 0 ? part : part.slice(0, eq)}=[redacted]`;
    });
  return `${url.slice(0, q)}?${names.join('&')}`;
}

/**
 * Request logging with the request id; query values are redacted (redactUrl); health and metrics probes are not logged. Request lines
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
      req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, url: redactUrl(req.url) }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  });
}
