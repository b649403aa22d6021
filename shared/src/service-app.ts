import express, { type Express, type Request, type RequestHandler, type Router } from 'express';
import type { Logger } from 'pino';
import { parseBody } from './parse-body';
import type { AcceptsForm } from './body-parsing';
import { errorHandler, notFoundHandler } from './error-handler';
import { fromDependencyError } from './dependency-errors';
import { PlinthError, UnauthorizedError, UnavailableError } from './errors';
import {
  INTERNAL_HEADERS,
  ReplayGuard,
  credentialExpiry,
  isInProcess,
  isKeyKind,
  optionalIdentity,
  verifyInternal,
  withinFallbackWindow,
} from './internal-auth';
import type { NonceStore } from './nonce-store';
import { SIGNED_DIGEST, internalBodyParser } from './internal-body';
import { coversStreamedBody } from './streamed-body';
import { httpLogger } from './logger';
import { createMetrics, type Metrics } from './metrics';
import { requestId } from './request-id';
import { isProjectId, type ProjectId } from './types';
import { requireSecretKey, type RequestContext } from './context';

export interface ServiceAppOptions {
  /** Service name, used in logs and metrics. */
  name: string;
  /** Shared with the gateway; requests without a valid credential are refused with 401. */
  internalSecret: string;
  logger: Logger;
  /** The service's API routes, mounted behind internal auth and body parsing. */
  routes: Router;
  /** Throws (or rejects) when a dependency is unreachable; drives `/readyz`. */
  ready?: () => Promise<void>;
  metrics?: Metrics;
  /** Log one line per request (off when the gateway in the same process already does). */
  logRequests?: boolean;
  /**
   * Deletes everything the service holds for a project, when the operator deletes it. Served at
   * `POST /v1/projects/{p}/purge` (purgePath) for the gateway only: no public route leads there.
   * Must be idempotent: the gateway retries until every service has answered.
   */
  purge?: (project: ProjectId) => Promise<void>;
  /**
   * Cluster: where every replica records the internal credentials it accepted (Redis), so a
   * credential is accepted once across replicas. Default: each process remembers its own.
   */
  nonceStore?: NonceStore;
  /**
   * The requests that may send a form-encoded body (records: the contract's collection creation).
   * Every other form body is refused with 415 before it is parsed. Default: none.
   */
  acceptsForm?: AcceptsForm;
  /**
   * The requests whose body the route reads itself, as a stream (records: multipart uploads,
   * streamed-body.ts). The chassis does not parse them; over the network it accepts them only
   * with a credential signed for their declared length. Default: none.
   */
  streamsBody?: (req: Request) => boolean;
}

/** Where a service answers the gateway's purge of a deleted project. */
export function purgePath(project: string): string {
  return `/v1/projects/${project}/purge`;
}

const PROJECT_IN_PATH = /^\/v1\/projects\/([^/]+)/;

/**
 * Refuses requests that did not come through the gateway (or another service holding the
 * internal secret), and records who is calling. A network request's credential must be bound to
 * this method and path, and is accepted once (`guard`); its body digest is checked by
 * internalBodyParser. With a `shared` nonce store (Redis) the credential is accepted once across
 * replicas; while that store cannot answer, a replica falls back to its own nonce cache and
 * accepts only credentials made within LOCAL_FALLBACK_WINDOW_SECONDS (docs/architecture.md,
 * "Failure modes"), so a Redis outage does not stop requests that need nothing else from Redis.
 */
export function requireInternal(secret: string, guard: ReplayGuard = new ReplayGuard(), shared?: NonceStore): RequestHandler {
  return (req, res, next) => {
    const h = req.headers;
    const project = h[INTERNAL_HEADERS.project];
    const keyKind = h[INTERNAL_HEADERS.keyKind];
    const reqId = h[INTERNAL_HEADERS.requestId];
    const credential = h[INTERNAL_HEADERS.credential];
    const optional = optionalIdentity(h);
    const refuse = () => next(new UnauthorizedError('This service only accepts requests from the Plinth gateway.'));
    if (typeof project !== 'string' || !isProjectId(project) || !isKeyKind(keyKind) || typeof reqId !== 'string' || !optional) {
      refuse();
      return;
    }
    const proceed = () => {
      const inPath = PROJECT_IN_PATH.exec(req.path);
      if (inPath && inPath[1] !== project) {
        next(new UnauthorizedError('The credential is for another project.'));
        return;
      }
      const ctx: RequestContext = { project, keyKind, requestId: reqId, ...optional };
      res.locals.plinth = ctx;
      next();
    };
    if (!isInProcess(req)) {
      const verified =
        typeof credential === 'string'
          ? verifyInternal(secret, credential, { project, keyKind, requestId: reqId, ...optional }, { method: req.method, path: req.originalUrl })
          : null;
      if (!verified || !guard.accept(verified)) {
        refuse();
        return;
      }
      res.locals[SIGNED_DIGEST] = verified.digest;
      if (shared) {
        // Every replica shares the nonces: a credential one replica accepted, no other accepts.
        shared.claim(verified.nonce, credentialExpiry(verified)).then(
          (first) => (first ? proceed() : refuse()),
          () =>
            withinFallbackWindow(verified)
              ? proceed()
              : next(new UnavailableError('The service cannot check its internal credentials right now.')),
        );
        return;
      }
    }
    proceed();
  };
}

/**
 * The chassis every service is built on: request ids, metrics, logs, health probes, internal
 * auth, 1 MiB JSON bodies (form bodies only where `acceptsForm` allows; body-parsing.ts), the routes, then JSON 404 and the error envelope.
 */
export function createServiceApp(opts: ServiceAppOptions): Express {
  const app = express();
  const metrics = opts.metrics ?? createMetrics(opts.name);
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // No ETag: hashing every JSON body costs on each request, and records carry `version`.
  app.set('etag', false);
  app.use(requestId());
  app.use(metrics.middleware);
  if (opts.logRequests !== false) app.use(httpLogger(opts.logger));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', service: opts.name });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await opts.ready?.();
    } catch (err) {
      opts.logger.warn({ err }, 'not ready');
      // Say which dependency (Redis, a full disk…) without exposing internals of other errors.
      const cause = fromDependencyError(err) ?? (err instanceof PlinthError ? err : null);
      throw new UnavailableError(cause ? `${opts.name} is not ready: ${cause.message}` : `${opts.name} is not ready.`);
    }
    res.json({ status: 'ready', service: opts.name });
  });
  app.get('/metrics', metrics.handler);
  // What the API needs on every request, whichever way it arrives: the caller established by
  // internal auth, the parsed body, the routes.
  const api = express.Router();
  api.use(requireInternal(opts.internalSecret, new ReplayGuard(), opts.nonceStore));
  // The body (parse-body.ts) — on the bytes the credential was signed for.
  const parse = internalBodyParser(parseBody(opts.acceptsForm));
  const streamsBody = opts.streamsBody;
  api.use(
    streamsBody
      ? (req, res, next) => {
          if (!streamsBody(req)) return parse(req, res, next);
          // The route streams the body; a network request must be signed for its declared length.
          if (!isInProcess(req) && !coversStreamedBody(res.locals[SIGNED_DIGEST] as string | undefined, req.headers)) {
            return next(new UnauthorizedError('This service only accepts requests from the Plinth gateway.'));
          }
          next();
        }
      : parse,
  );
  const purge = opts.purge;
  if (purge) {
    api.post('/v1/projects/:project/purge', async (_req, res) => {
      const ctx = requireSecretKey(res);
      await purge(ctx.project);
      res.json({ purged: true, project: ctx.project });
    });
  }
  api.use(opts.routes);
  app.use(api);
  app.use(notFoundHandler);
  app.use(errorHandler(opts.logger));
  IN_PROCESS_ENTRY.set(app, api);
  return app;
}

/** The API router of each app built by createServiceApp (see inProcessEntry). */
const IN_PROCESS_ENTRY = new WeakMap<object, RequestHandler>();

/**
 * How a gateway in the same process calls a service app: straight into its API router, not
 * through the whole app. The gateway has already given the request its id, counted it in its
 * metrics, logged it, and will answer an unmatched path (404) and any error (the envelope) with
 * the same handlers the service would use — doing all of that a second time, and re-running
 * express's per-request setup, cost a measurable share of a cheap request. An app not built by
 * createServiceApp is returned as it is.
 */
export function inProcessEntry(app: RequestHandler | Express): RequestHandler {
  return IN_PROCESS_ENTRY.get(app) ?? (app as RequestHandler);
}

/** A service built from its configuration, ready to be served or mounted in-process. */
export interface BuiltService {
  name: string;
  app: Express;
  /** Closes stores, queues and connections. */
  close: () => Promise<void>;
  /**
   * The first step of a shutdown's drain (after the grace period): work still waiting for
   * scarce capacity (an AdmissionQueue) is refused with 503 at once, and so is any asked for
   * later; work already running finishes. Bounds the drain by the longest running task.
   */
  stopAdmission?: () => void;
  /** Deletes everything the service holds for a project (see ServiceAppOptions.purge). */
  purge?: (project: ProjectId) => Promise<void>;
}
