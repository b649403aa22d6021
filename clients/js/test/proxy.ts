/**
 * A small HTTP server for the SDK's tests, in front of a real Plinth: forwards every request,
 * logs each exchange (so a test can count what the server was sent), can drop an answer after
 * the server has handled the request (a network failure the client cannot tell from a lost
 * request), and can serve static files from the same origin (the browser test's page and SDK).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Exchange {
  method: string;
  path: string;
  requestHeaders: http.IncomingHttpHeaders;
  requestBody: string;
  status: number;
  responseBody: string;
  at: number;
}

export interface TestProxy {
  url: string;
  log: Exchange[];
  close(): Promise<void>;
}

export interface ProxyOptions {
  /** Answer from here instead of forwarding (path → content). */
  staticFile?: (path: string) => { type: string; body: string | Buffer } | undefined;
  /** When true for an exchange, the client's connection is cut instead of answered. */
  drop?: (ex: Exchange) => boolean;
}

export async function startProxy(upstream: string, opts: ProxyOptions = {}): Promise<TestProxy> {
  const log: Exchange[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const file = req.method === 'GET' ? opts.staticFile?.(req.url ?? '/') : undefined;
      if (file) {
        res.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store' });
        res.end(file.body);
        return;
      }
      const headers = { ...req.headers };
      delete headers.host;
      delete headers.connection;
      const up = http.request(new URL(req.url ?? '/', upstream), { method: req.method, headers }, (ures) => {
        const out: Buffer[] = [];
        ures.on('data', (c: Buffer) => out.push(c));
        ures.on('end', () => {
          const ex: Exchange = {
            method: req.method ?? 'GET',
            path: req.url ?? '/',
            requestHeaders: req.headers,
            requestBody: Buffer.concat(chunks).toString('utf8'),
            status: ures.statusCode ?? 0,
            responseBody: Buffer.concat(out).toString('utf8'),
            at: Date.now(),
          };
          log.push(ex);
          if (opts.drop?.(ex)) {
            req.socket.destroy();
            return;
          }
          const h = { ...ures.headers };
          delete h['transfer-encoding'];
          delete h.connection;
          res.writeHead(ex.status, h);
          res.end(Buffer.concat(out));
        });
      });
      up.on('error', () => req.socket.destroy());
      up.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
