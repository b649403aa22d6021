import express, { type Express, type RequestHandler } from 'express';
import cors from 'cors';
import type { Logger } from 'pino';
import {
  ForbiddenError,
  InvalidRequestError,
  NotFoundError,
  PayloadTooLargeError,
  PlinthError,
  UnauthorizedError,
  UnavailableError,
  createMetrics,
  errorHandler,
  httpLogger,
  notFoundHandler,
  requestId,
  runInOrder,
  INTERNAL_HEADERS,
  isStreamedBody,
  type KeyKind,
} from '@plinth/shared';
import { bodyDeadline } from './body-deadline';
import { securityHeaders } from './security-headers';
import { bearer, looksLikeProjectKey, safeEqual } from './keys';
import { KeyAuthenticator } from './key-authenticator';
import { ProjectDeletion } from './purge/project-deletion';
import { AuditLog, actorOf, isMutation, readsSecrets } from './operators/audit-log';
import { OperatorAuth, roleAtLeast } from './operators/operator-auth';
import type { ServicePurge } from './purge/service-purges';
import { adminRoutes } from './routes/admin';
import { DASHBOARD_PATH, dashboardRoutes } from './dashboard-static';
import { REALTIME_ROUTE, realtimeUpgradeHandler, type UpgradeTarget } from './realtime-upgrade';
import { matchRoute, type ServiceName } from './routing';
import type { ProjectStore } from './store/project-store';
import type { Upstream } from './upstreams';

const MAX_BODY_BYTES = 1024 * 1024;
/** A streamed upload (a multipart record write) may be this large: the largest file a field allows, and its parts' headers. */
const MAX_UPLOAD_BYTES = 2 * 1024 * 1024 * 1024 + 1024 * 1024;
/** Longest time to receive an upload's body. */
const UPLOAD_TIMEOUT_MS = 15 * 60 * 1000;

export interface GatewayOptions {
  store: ProjectStore;
  upstreams: Record<ServiceName, Upstream>;
  adminKey: string;
  logger: Logger;
  /** `*` or a list of allowed origins. */
  corsOrigins: '*' | string[];
  keyCacheTtlMs: number;
  /** Express `trust proxy` setting: how many proxies sit in front of the gateway. */
  trustProxy?: number | boolean;
  /**
   * Drop the key cache whenever the project store's change counter moves (default true; only
   * stores that have one, i.e. SQLite). Cluster gateways with Redis use pub/sub instead.
   */
  watchStoreChanges?: boolean;
  /** Longest time to receive a request body, in ms (408 after). Default 10 000. */
  bodyTimeoutMs?: number;
  /** More readiness checks (standalone: free space under PLINTH_DATA_DIR); throw when not ready. */
  ready?: () => Promise<void>;
  /** Every service holding project data, purged when a project is deleted (default none). */
  purges?: ServicePurge[];
  /** First delay between retries of an unfinished purge (default 5 s). */
  purgeRetryMs?: number;
  /** Where WebSocket upgrades of `/v1/projects/{p}/realtime` go; without it they answer 503. */
  realtime?: UpgradeTarget;
  /** The built admin dashboard served at `/_/` (default dashboard/dist of this checkout). */
  dashboardDir?: string;
  /** The address users reach (PLINTH_PUBLIC_URL; mail links start with it), shown to the operator. */
  publicUrl?: string;
  /** PLINTH_AUDIT_RETENTION_DAYS: audit entries older than this are pruned (default 90). */
  auditRetentionDays?: number;
  /** PLINTH_OPERATOR_SESSION_TTL_S, in ms: an operator session's life without a refresh (default 30 min). */
  operatorSessionTtlMs?: number;
  /** PLINTH_OPERATOR_SESSION_MAX_S, in ms: the longest refreshes keep a session alive (default 12 h). */
  operatorSessionMaxMs?: number;
  /** bcrypt cost of operator passwords (default 10). */
  operatorBcryptCost?: number;
}

export interface Gateway {
  app: Express;
  keys: KeyAuthenticator;
  /** Named operators' sign-in and sessions. */
  operators: OperatorAuth;
  /** The audit log; `start()` its pruning after start, `close()` at shutdown. */
  audit: AuditLog;
  /** Project deletion and purges; `resume()` after start, `close()` at shutdown. */
  deletion: ProjectDeletion;
  /**
   * `/metrics` alone, without the operator key: serve it on a port that only the scraper can
   * reach (PLINTH_METRICS_PORT), never on the public one.
   */
  metricsApp: Express;
  /** Attach to the HTTP server: `server.on('upgrade', gateway.upgrade)`. */
  upgrade: UpgradeTarget;
}

/**
 * Refuses a declared body over 1 MiB before anything reads it (services also cap streamed bodies).
 * A multipart record write (streamed-body.ts) may be larger — its files' limits are enforced by
 * records while the bytes arrive — but must declare its length, which its credential is signed for.
 */
const bodyLimit: RequestHandler = (req, _res, next) => {
  const length = Number(req.headers['content-length'] ?? 0);
  if (isStreamedBody(req.method, req.path, req.headers)) {
    if (req.headers['content-length'] === undefined || req.headers['transfer-encoding'] !== undefined) {
      return next(new InvalidRequestError('Send a multipart upload with a Content-Length (not chunked).', { header: 'Content-Length' }));
    }
    return next(length > MAX_UPLOAD_BYTES ? new PayloadTooLargeError(`An upload is at most ${MAX_UPLOAD_BYTES} bytes.`) : undefined);
  }
  next(length > MAX_BODY_BYTES ? new PayloadTooLargeError() : undefined);
};

/** The body deadline, longer for uploads (a large file takes minutes on a slow link). */
function uploadAwareDeadline(timeoutMs: number): RequestHandler {
  const normal = bodyDeadline(timeoutMs);
  const upload = bodyDeadline(Math.max(timeoutMs, UPLOAD_TIMEOUT_MS));
  return (req, res, next) => (isStreamedBody(req.method, req.path, req.headers) ? upload(req, res, next) : normal(req, res, next));
}

/** Strips identity headers a client might forge; only the gateway sets them. */
function stripInternalHeaders(req: express.Request): void {
  delete req.headers[INTERNAL_HEADERS.credential];
  delete req.headers[INTERNAL_HEADERS.project];
  delete req.headers[INTERNAL_HEADERS.keyKind];
  delete req.headers[INTERNAL_HEADERS.keyId];
  delete req.headers[INTERNAL_HEADERS.clientAddress];
}

/**
 * The gateway app: project-key authentication, the routing table, and one transport per service
 * (in-process or proxy), plus the operator API. See docs/architecture.md
 * "Two ways to run the same code" and docs/api-conventions.md ("Credentials", "Errors").
 */
export function createGatewayApp(opts: GatewayOptions): Gateway {
  const app = express();
  const keys = new KeyAuthenticator(opts.store, {
    cacheTtlMs: opts.keyCacheTtlMs,
    changeCounter: opts.store.changeCounter && opts.watchStoreChanges !== false ? () => opts.store.changeCounter!() : undefined,
  });
  const deletion = new ProjectDeletion({
    store: opts.store,
    purges: opts.purges ?? [],
    logger: opts.logger,
    retryMs: opts.purgeRetryMs ?? 5000,
    onDeleted: () => keys.forget(),
  });
  const operators = new OperatorAuth(opts.store.operators, opts.adminKey, {
    sessionTtlMs: opts.operatorSessionTtlMs ?? 30 * 60_000,
    sessionMaxMs: opts.operatorSessionMaxMs ?? 12 * 3_600_000,
    bcryptCost: opts.operatorBcryptCost,
  });
  const audit = new AuditLog(opts.store.operators, opts.logger, opts.auditRetentionDays ?? 90);
  const metrics = createMetrics('gateway', { defaultMetrics: true });
  app.disable('x-powered-by');
  app.set('trust proxy', opts.trustProxy ?? false);
  app.set('query parser', 'simple');
  // No ETag: hashing every JSON body costs on each request, and records carry `version`.
  app.set('etag', false);
  // What every request goes through, in one layer: express's router passing a request from one
  // layer to the next costs more than some of these steps themselves.
  app.use(
    runInOrder([
      requestId(),
      metrics.middleware,
      httpLogger(opts.logger),
      securityHeaders(),
      cors({
        origin: opts.corsOrigins === '*' ? '*' : opts.corsOrigins,
        exposedHeaders: ['X-Request-Id', 'Retry-After'],
        allowedHeaders: ['Authorization', 'Content-Type', 'X-Db-User-Token', 'X-Auth-User-Token', 'Idempotency-Key', 'X-Request-Id'],
        maxAge: 600,
      }),
      bodyLimit,
      uploadAwareDeadline(opts.bodyTimeoutMs ?? 10_000),
    ]),
  );

  app.use(async (req, res, next) => {
    const route = matchRoute(req.method, req.path);
    if (!route) return next();
    stripInternalHeaders(req);
    let keyKind: KeyKind;
    // A download with ?token= and no key: the records service checks the token.
    const byToken = route.auth === 'key-or-token' && req.headers.authorization === undefined && req.query.token !== undefined;
    if (route.auth === 'key' || (route.auth === 'key-or-token' && !byToken)) {
      const credential = bearer(req.headers.authorization);
      // A named operator's session or the operator key acts on a project as its secret key would
      // (a viewer only reads); no project key is made for it (docs/operators.md "Operators, roles and sessions").
      const operator = credential && !looksLikeProjectKey(credential) ? await operators.identify(credential) : null;
      if (operator) {
        if (!(await opts.store.getProject(route.project))) throw new NotFoundError('Unknown project.');
        const mutation = isMutation(req.method, req.path);
        const secrets = readsSecrets(req.method, req.path);
        if (mutation || secrets) audit.record(req, res, actorOf(operator), route.project);
        if ((mutation || secrets) && !roleAtLeast(operator.role, 'admin')) {
          const message = secrets
            ? "A viewer can look at a project but not export its users' secrets or its providers' client secrets: this needs the admin role."
            : 'A viewer can look at a project but not change it: this needs the admin role.';
          throw new ForbiddenError(message, { role: operator.role, needed: 'admin' });
        }
        keyKind = 'secret';
        req.headers[INTERNAL_HEADERS.keyId] = operator.kind === 'operator' ? operator.operator.id : 'bootstrap';
      } else {
        const key = await keys.authenticateKey(route.project, credential);
        keyKind = key.kind;
        req.headers[INTERNAL_HEADERS.keyId] = key.id;
        if (key.kind === 'secret' && (isMutation(req.method, req.path) || readsSecrets(req.method, req.path))) {
          audit.record(req, res, { kind: 'key', id: key.id, label: `${key.prefix}…` }, route.project);
        }
      }
    } else {
      if (!(await opts.store.getProject(route.project))) throw new NotFoundError('Unknown project.');
      keyKind = 'none';
    }
    req.headers[INTERNAL_HEADERS.project] = route.project;
    req.headers[INTERNAL_HEADERS.keyKind] = keyKind;
    // The client's address as far as PLINTH_TRUST_PROXY trusts X-Forwarded-For: services limit
    // anonymous callers by it. Signed with the rest in cluster; a client's own copy was stripped.
    if (req.ip !== undefined) req.headers[INTERNAL_HEADERS.clientAddress] = req.ip;
    opts.upstreams[route.service].handle(req, res, next);
  });

  // After the API dispatch, which answers every project route itself (or passes on what is
  // not one): API requests skip these layers.
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', service: 'gateway' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await opts.store.ping();
    } catch (err) {
      opts.logger.warn({ err }, 'project store unreachable');
      throw new UnavailableError('The gateway cannot reach its project store.');
    }
    try {
      await opts.ready?.();
    } catch (err) {
      opts.logger.warn({ err }, 'not ready');
      throw new UnavailableError(`Not ready: ${err instanceof PlinthError ? err.message : 'a dependency is unavailable.'}`);
    }
    res.json({ status: 'ready', service: 'gateway' });
  });
  // On the public port, metrics (traffic, latencies, process figures) are for the operator only.
  app.get('/metrics', (req, _res, next) => {
    const key = bearer(req.headers.authorization);
    next(key && safeEqual(key, opts.adminKey) ? undefined : new UnauthorizedError('/metrics needs the operator key.'));
  }, metrics.handler);
  // Only paths under `/_` enter the dashboard's router (API requests skip its layers).
  const dashboard = dashboardRoutes(opts.dashboardDir);
  app.use((req, res, next) => (req.path.startsWith(DASHBOARD_PATH) ? dashboard(req, res, next) : next()));
  app.use('/v1/admin', adminRoutes({ store: opts.store, keys, operators, audit, deletion, publicUrl: opts.publicUrl }));

  app.get(REALTIME_ROUTE, () => {
    throw new InvalidRequestError('The realtime endpoint takes WebSocket connections only (Upgrade: websocket).');
  });
  app.use(notFoundHandler);
  app.use(errorHandler(opts.logger));
  const metricsApp = express();
  metricsApp.disable('x-powered-by');
  metricsApp.get('/metrics', metrics.handler);
  metricsApp.use(notFoundHandler);
  metricsApp.use(errorHandler(opts.logger));
  return {
    app,
    keys,
    operators,
    audit,
    deletion,
    metricsApp,
    upgrade: realtimeUpgradeHandler({
      keys,
      projectExists: async (project) => (await opts.store.getProject(project)) !== null,
      target: opts.realtime,
      logger: opts.logger,
      trustProxy: opts.trustProxy,
    }),
  };
}
