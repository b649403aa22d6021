import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { MailKind, MailQueue } from '@plinth/shared';
import type { TransportName } from '../transport/transport';

/** The mailer's counters, in the app's registry (served on /metrics). */
export interface MailMetrics {
  sent(kind: MailKind, transport: TransportName, latencySeconds: number): void;
  /** An attempt failed and another one is scheduled. */
  retried(kind: MailKind): void;
  /** The last attempt failed: the job is now a dead letter. */
  failed(kind: MailKind): void;
}

/**
 * Registers: `plinth_mail_queue_jobs{state}` (waiting/active/failed, read from the queue at
 * scrape time), `plinth_mail_sent_total{kind,transport}`, `plinth_mail_retried_total{kind}`,
 * `plinth_mail_failed_total{kind}` and `plinth_mail_delivery_latency_seconds` (job created →
 * accepted by the transport, retries included).
 */
export function createMailMetrics(registry: Registry, queue: MailQueue): MailMetrics {
  new Gauge({
    name: 'plinth_mail_queue_jobs',
    help: 'Mail jobs in the queue by state: waiting (incl. backing off), active, failed (dead letters).',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      // An unreachable queue must not take /metrics down: keep the last values (readyz reports it).
      const counts = await queue.counts().catch(() => null);
      if (!counts) return;
      this.set({ state: 'waiting' }, counts.waiting);
      this.set({ state: 'active' }, counts.active);
      this.set({ state: 'failed' }, counts.failed);
    },
  });
  const sent = new Counter({
    name: 'plinth_mail_sent_total',
    help: 'Mails accepted by the transport.',
    labelNames: ['kind', 'transport'] as const,
    registers: [registry],
  });
  const retried = new Counter({
    name: 'plinth_mail_retried_total',
    help: 'Delivery attempts that failed and were scheduled for a retry.',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const failed = new Counter({
    name: 'plinth_mail_failed_total',
    help: 'Mail jobs whose last attempt failed (now dead letters).',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'plinth_mail_delivery_latency_seconds',
    help: 'From job creation to acceptance by the transport, retries included.',
    labelNames: ['kind'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800],
    registers: [registry],
  });
  return {
    sent(kind, transport, latencySeconds) {
      sent.inc({ kind, transport });
      latency.observe({ kind }, latencySeconds);
    },
    retried(kind) {
      retried.inc({ kind });
    },
    failed(kind) {
      failed.inc({ kind });
    },
  };
}
