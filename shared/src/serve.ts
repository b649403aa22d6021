import http from 'node:http';
import type { RequestListener } from 'node:http';
import type { Logger } from 'pino';

export interface ServeOptions {
  port: number;
  host?: string;
  logger: Logger;
  /** Runs after in-flight requests drain: close stores, queues, connections. */
  onShutdown?: () => Promise<void>;
  /** How long to wait for in-flight requests before closing anyway. */
  drainMs?: number;
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
  /** Stops accepting, drains, runs onShutdown. Idempotent. */
  shutdown: () => Promise<void>;
}

/**
 * Listens, and shuts down gracefully on SIGTERM/SIGINT: stop accepting, let in-flight requests
 * finish (up to drainMs), close idle keep-alive sockets, then run onShutdown and exit.
 * A request that throws is answered by the app's error handler; an error that escapes a request
 * entirely is logged and the process keeps serving.
 */
export async function serve(handler: RequestListener, opts: ServeOptions): Promise<Served> {
  const server = http.createServer(handler);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;

  let closing: Promise<void> | null = null;
  const shutdown = (): Promise<void> => {
    closing ??= (async () => {
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
export function installProcessHandlers(shutdown: () => Promise<void>, logger: Logger): void {
  const onSignal = (signal: string) => {
    logger.info({ signal }, 'signal received');
    shutdown().then(
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
