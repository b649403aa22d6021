import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startWebhookReceiver } from '@plinth/testing/webhook-receiver';
import { runEntry } from './processes';

/**
 * Webhook delivery (docs/webhooks.md): standalone ×1 (SQLite outbox, embedded queue), one
 * webhook on `record.created` to a receiver on this machine answering 200 at once. N records are
 * written in batches of 100; the clock runs from the first write until the receiver has every
 * event: the outbox read, the fan-out to the queue, the signing and the POSTs, end to end.
 * BENCH_WEBHOOK_EVENTS (default 5000) and BENCH_WEBHOOK_CONCURRENCY (default 8) set the run.
 */
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 5000);
const PROJECT = 'bench-webhooks';
/** Deliveries in flight at once (PLINTH_WEBHOOK_CONCURRENCY). */
const CONCURRENCY = Number(process.env.BENCH_WEBHOOK_CONCURRENCY ?? 8);

async function call(url: string, key: string, method: string, route: string, body?: unknown): Promise<{ [k: string]: unknown }> {
  const res = await fetch(`${url}${route}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { [k: string]: unknown };
}

export async function benchWebhookDelivery(): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-webhooks-'));
  const adminKey = `adm_${randomBytes(24).toString('hex')}`;
  const receiver = await startWebhookReceiver();
  try {
    const server = await runEntry('gateway/dist/standalone.js', {
      PLINTH_DATA_DIR: dataDir,
      PLINTH_ADMIN_KEY: adminKey,
      PLINTH_WORKERS: '1',
      PLINTH_RATE_LIMIT_SECRET_KEY: '1000000000',
      PLINTH_WEBHOOK_ALLOW_HOSTS: '127.0.0.2',
      PLINTH_WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    });
    try {
      const { keys } = (await call(server.url, adminKey, 'POST', '/v1/admin/projects', { id: PROJECT })) as { keys: { secret: string } };
      const p = `/v1/projects/${PROJECT}`;
      await call(server.url, keys.secret, 'POST', `${p}/collections`, { name: 'items', fields: { n: { type: 'integer' } } });
      await call(server.url, keys.secret, 'POST', `${p}/webhooks`, { url: receiver.url, events: ['record.created'] });
      const started = process.hrtime.bigint();
      for (let b = 0; b < EVENTS / 100; b++) {
        const operations = Array.from({ length: 100 }, (_, i) => ({ op: 'create', collection: 'items', data: { n: b * 100 + i } }));
        await call(server.url, keys.secret, 'POST', `${p}/batch`, { operations });
      }
      const written = Number(process.hrtime.bigint() - started) / 1e6;
      await receiver.until((got) => got.length >= EVENTS, 600_000);
      const total = Number(process.hrtime.bigint() - started) / 1e6;
      const distinct = new Set(receiver.received.map((r) => r.headers['webhook-id'])).size;
      return [
        `## Webhooks: ${EVENTS} record.created events delivered to a local receiver (standalone ×1, SQLite outbox, embedded queue, concurrency ${CONCURRENCY})`,
        '',
        '| step | ms | events/s |',
        '|---|---:|---:|',
        `| ${EVENTS} creates written (batches of 100) | ${written.toFixed(0)} | ${Math.round((EVENTS * 1000) / written)} |`,
        `| from the first write until the receiver had every event | ${total.toFixed(0)} | ${Math.round((EVENTS * 1000) / total)} |`,
        '',
        `distinct webhook-ids received: ${distinct} of ${EVENTS}; requests received: ${receiver.received.length}`,
      ].join('\n');
    } finally {
      await server.stop();
    }
  } finally {
    await receiver.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
