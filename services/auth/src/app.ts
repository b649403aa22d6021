import { Router, type Express } from 'express';
import type { Logger } from 'pino';
import { createServiceApp, type NonceStore } from '@plinth/shared';
import type { AuthContext } from './flows/auth-context';
import { actionRoutes } from './routes/action-routes';
import { purgeProject } from './flows/purge';
import { adminRoutes } from './routes/admin-routes';
import { portabilityRoutes } from './routes/portability-routes';
import { anonymousRoutes } from './routes/anonymous-routes';
import { clientRoutes } from './routes/client-routes';
import { mfaRoutes } from './routes/mfa-routes';
import { identityRoutes } from './routes/identity-routes';
import { oauthBrowserRoutes } from './routes/oauth-routes';
import { requireAuthEnabled, requireProjectKey } from './routes/guards';
import { projectRoutes } from './routes/project-routes';
import { selfServiceRoutes } from './routes/self-service-routes';
import { createRateLimits, type RateLimitOptions } from './routes/rate-limits';


/** `POST /v1/projects/{p}/auth/action`: the hosted action pages' form submissions. */
const ACTION_PATH = /^\/v1\/projects\/[^/]+\/auth\/action\/?$/;
/** `POST /v1/projects/{p}/auth/oauth/callback`: a provider's form_post answer (docs/auth.md "Sign-in with a provider"). */
const OAUTH_CALLBACK_PATH = /^\/v1\/projects\/[^/]+\/auth\/oauth\/callback$/;
export interface AuthAppDeps {
  /** Cluster: nonces of accepted internal credentials, shared by every replica (Redis). */
  nonceStore?: NonceStore;
  logger: Logger;
  internalSecret: string;
  auth: AuthContext;
  rateLimits: RateLimitOptions;
  /** Express `trust proxy` hops; the client IP for rate limits comes from X-Forwarded-For within them. */
  trustProxy: number;
  logRequests?: boolean;
  ready?: () => Promise<void>;
}

/** Builds the auth service's express app from injected ports. */
export function createAuthApp(deps: AuthAppDeps): Express {
  const routes = Router();
  const rateLimits = createRateLimits(deps.rateLimits);
  routes.use(projectRoutes(deps.auth));
  routes.use(portabilityRoutes(deps.auth));
  routes.use(actionRoutes(deps.auth, rateLimits));
  routes.use(oauthBrowserRoutes(deps.auth, rateLimits));
  routes.use(
    '/v1/projects/:project/auth',
    requireProjectKey,
    requireAuthEnabled(deps.auth.settings),
    clientRoutes(deps.auth, rateLimits),
    selfServiceRoutes(deps.auth, rateLimits),
    anonymousRoutes(deps.auth, rateLimits),
    mfaRoutes(deps.auth, rateLimits),
    identityRoutes(deps.auth, rateLimits),
    adminRoutes(deps.auth),
  );
  const app = createServiceApp({
    name: 'auth',
    internalSecret: deps.internalSecret,
    logger: deps.logger,
    routes,
    ready: deps.ready,
    logRequests: deps.logRequests,
    nonceStore: deps.nonceStore,
    // The hosted action pages and form_post callbacks are plain HTML forms; every other endpoint takes JSON only.
    acceptsForm: (req) => req.method === 'POST' && (ACTION_PATH.test(req.path) || OAUTH_CALLBACK_PATH.test(req.path)),
    purge: (project) => purgeProject(deps.auth, project),
  });
  app.set('trust proxy', deps.trustProxy);
  return app;
}
