import http from 'node:http';
import type { RequestListener } from 'node:http';
import Joi from 'joi';
import type { Logger } from 'pino';
import { loadConfig } from './config';

/**
 * `PLINTH_SHUTDOWN_GRACE_MS`: after SIGTERM, how long a process keeps serving while `/readyz`
 * answers 503, so load balancers and Kubernetes endpoints stop routing to it before it closes
 * its listener. Default 5000; 0 closes at once. (Read here, once, for every process.)
 */
export function shutdownGraceMs(env: NodeJS.ProcessEnv = process.env): number {
  const schema = Joi.object<{ PLINTH_SHUTDOWN_GRACE_MS: number }>({
    PLINTH_SHUTDOWN_GRACE_MS: Joi.number().integer().min(0).max(600_000).default(5000),
  });
  return loadConfig(schema, env).PLINTH_SHUTDOWN_GRACE_MS;
}

export interface ServeOptions {
  port: number;
  host?: string;
  logger: Logger;
  /** Runs after in-flight requests drain: close stores, queues, connections. */
  onShutdown?: () => Promise<void>;
  /** How long to wait for in-flight requests before closing anyway. */
  drainMs?: number;
  /** Unready-but-serving period before the drain (default: PLINTH_SHUTDOWN_GRACE_MS). */
  graceMs?: number;
  /**
   * Runs first, before draining: close what the HTTP server does not track, such as upgraded
   * WebSocket connections (the server cannot finish closing while they are open).
   */
  beforeDrain?: () => Promise<void> | void;
}

export interface Served {
  server: http.Server;
  /** The port actually bound (useful with port 0). */
  port: number;
  /**
   * Goes unready (`/readyz` 503, `Connection: close` on answers) and keeps serving for the grace
   * period, then stops accepting, drains and runs onShutdown. Idempotent. `{graceMs: 0}` skips
   * the grace (Ctrl+C in a terminal).
   */
  shutdown: (opts?: { graceMs?: number }) => Promise<void>;
}

const UNREADY_BODY = JSON.stringify({ error: 'unavailable', message: 'Shutting down: not taking new traffic.' });

/**
 * Listens, and shuts down gracefully on SIGTERM/SIGINT: unready first for the grace period
 * (still serving), then stop accepting, let in-flight requests
 * finish (up to drainMs), close idle keep-alive sockets, then run onShutdown and exit.
 * A request that throws is answered by the app's error handler; an error that escapes a request
 * entirely is logged and the process keeps serving.
 */
export async function serve(handler: RequestListener, opts: ServeOptions): Promise<Served> {
  const graceMs = opts.graceMs ?? shutdownGraceMs();
  let unready = false;
  const server = http.createServer((req, res) => {
    if (unready) {
      res.setHeader('Connection', 'close');
      if (req.method === 'GET' && req.url?.split('?')[0] === '/readyz') {
        res.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8' }).end(UNREADY_BODY);
        return;
      }
    }
    handler(req, res);
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;

  let closing: Promise<void> | null = null;
  let skipGrace: (() => void) | null = null;
  const shutdown = (how: { graceMs?: number } = {}): Promise<void> => {
    if (how.graceMs === 0) skipGrace?.();
    closing ??= (async () => {
      unready = true;
      const grace = how.graceMs ?? graceMs;
      if (grace > 0) {
        opts.logger.info({ grace_ms: grace }, 'shutting down: unready, still serving for the grace period');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, grace);
          skipGrace = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      opts.logger.info('shutting down: draining requests');
      await opts.beforeDrain?.();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), opts.drainMs ?? 10_000);
      await closed;
      clearTimeout(timer);
      await opts.onShutdown?.();
      opts.logger.info('shut down');
    })();
    return closing;
  };
  return { server, port, shutdown };
}

/** Wires SIGTERM/SIGINT to shutdown and keeps stray errors from killing the process. */
export function installProcessHandlers(shutdown: (opts?: { graceMs?: number }) => Promise<void>, logger: Logger): void {
  const onSignal = (signal: string) => {
    logger.info({ signal }, 'signal received');
    // SIGTERM (orchestrators) gets the grace period; SIGINT (Ctrl+C) drains at once.
    shutdown(signal === 'SIGINT' ? { graceMs: 0 } : {}).then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection'));
  process.on('uncaughtException', (err) => logger.error({ err }, 'uncaught exception'));
}
