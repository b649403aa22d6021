import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RequestHandler } from 'express';

/** Health probes and scrapes are not API traffic: they are not counted. */
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

/** One registry per app, so several apps can live in one process (standalone mode). */
export interface Metrics {
  registry: Registry;
  middleware: RequestHandler;
  handler: RequestHandler;
}

export function createMetrics(service: string, opts: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (opts.defaultMetrics) collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'plinth_http_requests_total',
    help: 'HTTP API requests answered (probes excluded), by method and status.',
    labelNames: ['method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'plinth_http_request_duration_seconds',
    help: 'HTTP request latency.',
    labelNames: ['method'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  // The labelled series, looked up once per method (and status): prom-client hashes the label
  // object on every call otherwise, which showed in the profile of a cheap request.
  const timers = new Map<string, Histogram.Internal<'method'>>();
  const counters = new Map<string, Counter.Internal>();
  const middleware: RequestHandler = (req, res, next) => {
    if (PROBES.has(req.path)) return next();
    const method = req.method;
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      let timer = timers.get(method);
      if (!timer) timers.set(method, (timer = duration.labels({ method })));
      timer.observe(Number(process.hrtime.bigint() - started) / 1e9);
      const key = `${method} ${res.statusCode}`;
      let counter = counters.get(key);
      if (!counter) counters.set(key, (counter = requests.labels({ method, status: String(res.statusCode) })));
      counter.inc();
    });
    next();
  };
  const handler: RequestHandler = async (_req, res) => {
    res.set('Content-Type', registry.contentType).send(await registry.metrics());
  };
  return { registry, middleware, handler };
}
