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
  const middleware: RequestHandler = (req, res, next) => {
    if (PROBES.has(req.path)) return next();
    const end = duration.startTimer({ method: req.method });
    res.on('finish', () => {
      end();
      requests.inc({ method: req.method, status: String(res.statusCode) });
    });
    next();
  };
  const handler: RequestHandler = async (_req, res) => {
    res.set('Content-Type', registry.contentType).send(await registry.metrics());
  };
  return { registry, middleware, handler };
}
