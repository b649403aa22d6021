/**
 * A webhook receiver for tests and the bench: a real HTTP server that keeps every request it
 * accepted, answers with the status it is told to, and can go away (connections refused) and
 * come back on the same port.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Webhook settings for a test server whose receivers are startWebhookReceiver's: deliveries to
 * 127.0.0.2 allowed, the dispatcher and the queue polled every 20 and 10 ms, retries 20 ms apart
 * (the default 5 s scaled down) for a window of 60 s. Spread and override what a suite needs.
 */
export const TEST_WEBHOOK_ENV = {
  PLINTH_WEBHOOK_ALLOW_HOSTS: '127.0.0.2',
  PLINTH_WEBHOOK_BACKOFF_MS: '20',
  PLINTH_WEBHOOK_RETRY_WINDOW_MS: '60000',
  PLINTH_WEBHOOK_DISPATCH_MS: '20',
  PLINTH_WEBHOOK_POLL_MS: '10',
} as const;

export interface ReceivedWebhook {
  headers: Record<string, string>;
  body: string;
  /** The status it was answered with. */
  status: number;
}

export interface WebhookReceiver {
  /** `http://host:port/hook`. */
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** The status the next requests get (default 200). */
  answer(status: number): void;
  /** Stops listening: connections are refused until `up`. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** Resolves once `predicate(received)` holds (polled every 20 ms), or rejects after `timeoutMs`. */
  until(predicate: (received: ReceivedWebhook[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(host = '127.0.0.2', port = 0): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let status = 200;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      received.push({ headers, body: Buffer.concat(chunks).toString('utf8'), status });
      res.writeHead(status, { 'content-type': 'text/plain', connection: 'close' }).end('ok');
    });
  });
  const listen = (p: number) => new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(p, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  await listen(port);
  const bound = (server.address() as AddressInfo).port;
  let listening = true;
  return {
    url: `http://${host}:${bound}/hook`,
    port: bound,
    received,
    answer: (s) => {
      status = s;
    },
    down: async () => {
      if (!listening) return;
      listening = false;
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
    up: async () => {
      if (listening) return;
      await listen(bound);
      listening = true;
    },
    until: async (predicate, timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) throw new Error(`webhook receiver: condition not met within ${timeoutMs} ms (${received.length} received)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: async () => {
      if (!listening) return;
      listening = false;
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
