import http from 'node:http';
import type { Request, Response, NextFunction } from 'express';
import { createProxyMiddleware, proxyEventsPlugin } from 'http-proxy-middleware';
import type { Logger } from 'pino';
import {
  closeAfterResponse,
  INTERNAL_HEADERS,
  readRawBody,
  UnavailableError,
  bodyDigest,
  inProcessEntry,
  isStreamedBody,
  markInProcess,
  streamedDigest,
  signInternal,
  type KeyKind,
} from '@plinth/shared';
import { isUnreachableError, ReplicaPool, type ReplicaPoolOptions } from './replica-pool';


/** Where the gateway sends a service's requests: the same interface for both transports. */
export interface Upstream {
  readonly kind: 'in-process' | 'proxy';
  /**
   * Forwards a request whose identity headers (project, key kind, request id) the gateway has
   * set. The transport adds what proves them to the service.
   */
  handle(req: Request, res: Response, next: NextFunction): void;
  close(): void;
}

/**
 * Standalone transport: the service's express app runs in this process and is called directly,
 * no loopback HTTP hop (docs/architecture.md "Two ways to run the same code"). The request never leaves the process, so it is marked
 * in-process instead of signed. For an app built on the service chassis, only its API router
 * runs (inProcessEntry): request id, metrics, logging, 404 and the error envelope are the
 * gateway's, done once.
 */
export function inProcessUpstream(app: (req: Request, res: Response, next: NextFunction) => void): Upstream {
  const entry = inProcessEntry(app);
  return {
    kind: 'in-process',
    handle: (req, res, next) => {
      markInProcess(req);
      entry(req, res, next);
    },
    close: () => {},
  };
}

const EMPTY_BODY = Buffer.alloc(0);

/** Bodies the gateway read to sign them, written to the upstream request by the proxy. */
const readBodies = new WeakMap<object, Buffer>();

/**
 * Signs the identity headers, the method, the path and the body's digest with the internal
 * secret (what crosses the network). The service accepts each signature once.
 */
export function signRequest(
  req: Pick<http.IncomingMessage, 'headers' | 'method' | 'url'> & { originalUrl?: string },
  body: Buffer,
  internalSecret: string,
  digest: string = bodyDigest(body),
): void {
  const h = req.headers;
  h[INTERNAL_HEADERS.credential] = signInternal(
    internalSecret,
    {
      project: String(h[INTERNAL_HEADERS.project]),
      keyKind: h[INTERNAL_HEADERS.keyKind] as KeyKind,
      requestId: String(h[INTERNAL_HEADERS.requestId]),
      keyId: h[INTERNAL_HEADERS.keyId] as string | undefined,
      clientAddress: h[INTERNAL_HEADERS.clientAddress] as string | undefined,
    },
    { method: req.method ?? 'GET', path: req.originalUrl ?? req.url ?? '/' },
    digest,
  );
}

/**
 * Whether a request may be sent again to another replica after a connection failure: GET, HEAD
 * and OPTIONS, and any request carrying an `Idempotency-Key` (its body was read and kept to be
 * signed, so it can be sent again; the service answers a repeat with the first answer).
 */
function canRetry(req: http.IncomingMessage): boolean {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return true;
  return req.headers['idempotency-key'] !== undefined;
}

/**
 * Cluster transport: http-proxy-middleware over keep-alive connections, round-robin across the
 * usable replicas of one service (`ReplicaPool`: active `/readyz` checks, passive ejection on a
 * refused or reset connection). A request that failed to connect is retried once on another
 * replica when it is safe to repeat (`canRetry`). When no replica answers: 503 `unavailable`.
 */
export function proxyUpstream(
  service: string,
  targets: string[],
  logger: Logger,
  internalSecret: string,
  poolOptions: Partial<ReplicaPoolOptions> = {},
): Upstream {
  const pool = new ReplicaPool(targets, { service, logger, ...poolOptions });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512, keepAliveMsecs: 10_000 });
  /** The replica each request was last sent to, and the callback to retry it with. */
  const sentTo = new WeakMap<object, string>();
  const retries = new WeakMap<object, () => void>();
  /** Requests whose body is piped through as it arrives (multipart uploads). */
  const streamed = new WeakSet<object>();
  const proxy = createProxyMiddleware<http.IncomingMessage, http.ServerResponse>({
    target: targets[0],
    router: (req) => {
      const t = pool.pick(sentTo.get(req));
      sentTo.set(req, t);
      return t;
    },
    agent,
    xfwd: true,
    // Only the plugin that wires `on` handlers: errors and logging are the gateway's own, and the
    // default per-request logger plugin costs on every request.
    ejectPlugins: true,
    plugins: [proxyEventsPlugin],
    proxyTimeout: 30_000,
    on: {
      proxyRes: (_proxyRes, req, res) => {
        const target = sentTo.get(req);
        if (target) pool.succeeded(target);
        // An upload the service refused before reading all of it (413, 415…): the client is
        // still sending, so this answer closes the connection the same way the service did —
        // half-closed, dropped later, so the client reads the answer rather than a reset.
        if (streamed.has(req) && !req.readableEnded) closeAfterResponse(res);
      },
      proxyReq: (proxyReq, req, res) => {
        // A client that goes away before its answer takes the upstream request with it, so the
        // service sees the disconnect and drops work still queued for it (a password hash).
        // http-proxy does this only for a client that left mid-body; the gateway has read it.
        res.once('close', () => {
          if (!res.writableFinished) proxyReq.destroy();
        });
        // The gateway read the body to sign it: send those bytes (the request stream has ended).
        const body = readBodies.get(req);
        if (!body || body.length === 0) return;
        proxyReq.removeHeader('transfer-encoding');
        proxyReq.setHeader('content-length', body.length);
        proxyReq.write(body);
      },
      error: (err, req, res) => {
        const target = sentTo.get(req);
        const unreachable = isUnreachableError(err);
        if (target && unreachable) pool.eject(target, err);
        const retry = retries.get(req);
        if (retry && unreachable && res instanceof http.ServerResponse && !res.headersSent && canRetry(req)) {
          retries.delete(req);
          logger.info({ service, from: target, req_id: req.headers['x-request-id'] }, 'retrying on another replica');
          retry();
          return;
        }
        logger.warn({ err, service, req_id: req.headers['x-request-id'] }, 'upstream unreachable');
        if (!(res instanceof http.ServerResponse)) return;
        if (res.headersSent) {
          // An answer already written whole stays for the client to read (closeAfterResponse
          // drops the connection later); one cut off mid-way is cut off for the client too.
          if (!res.writableFinished) res.destroy();
          return;
        }
        const e = new UnavailableError(`The ${service} service is unavailable.`);
        res.writeHead(e.status, { 'Content-Type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(e.toEnvelope()));
      },
    },
  });
  return {
    kind: 'proxy',
    handle: (req, res, nxt) => {
      if (isStreamedBody(req.method, req.path, req.headers)) {
        // A multipart upload is piped through as it arrives, signed for its declared length
        // (streamed-body.ts); it is never retried (its body is not kept).
        streamed.add(req);
        signRequest(req, EMPTY_BODY, internalSecret, streamedDigest(Number(req.headers['content-length'])));
        void proxy(req, res, nxt);
        return;
      }
      readRawBody(req).then(
        (body) => {
          readBodies.set(req, body);
          if (pool.targets.length > 1) {
            retries.set(req, () => {
              signRequest(req, body, internalSecret); // a fresh credential (nonce) for the second attempt
              void proxy(req, res, nxt);
            });
          }
          signRequest(req, body, internalSecret);
          void proxy(req, res, nxt);
        },
        (err: unknown) => nxt(err),
      );
    },
    close: () => {
      pool.close();
      agent.destroy();
    },
  };
}
