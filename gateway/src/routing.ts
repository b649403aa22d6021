import { isProjectId, type ProjectId } from '@plinth/shared';

export type ServiceName = 'records' | 'auth' | 'mailer';

/**
 * How a route is authenticated at the gateway: a project key, nothing (public documents), or
 * for file downloads a key or — without an Authorization header — a `?token=` the service checks.
 */
export type RouteAuth = 'key' | 'none' | 'key-or-token';

interface RouteRule {
  service: ServiceName;
  /** Matched against the path after `/v1/projects/{p}`. */
  pattern: RegExp;
  auth: RouteAuth;
  methods?: readonly string[];
}

/**
 * The one routing table (docs/architecture.md "Two ways to run the same code"). Both transports — in-process and proxy — use it.
 * First match wins.
 */
export const ROUTES: readonly RouteRule[] = [
  { service: 'auth', pattern: /^\/auth\/jwks\.json$/, auth: 'none', methods: ['GET', 'HEAD'] },
  // The hosted action pages that mail links open: the token in the link is the credential.
  { service: 'auth', pattern: /^\/auth\/action$/, auth: 'none', methods: ['GET', 'HEAD', 'POST'] },
  // A provider sign-in's browser navigations: the redirect allow-list, state and cookie guard them.
  { service: 'auth', pattern: /^\/auth\/oauth\/[a-z][a-z0-9-]{0,31}\/start$/, auth: 'none', methods: ['GET', 'HEAD'] },
  { service: 'auth', pattern: /^\/auth\/oauth\/callback$/, auth: 'none', methods: ['GET', 'HEAD', 'POST'] },
  { service: 'records', pattern: /^\/collections(\/|$)/, auth: 'key' },
  { service: 'records', pattern: /^\/batch$/, auth: 'key', methods: ['POST'] },
  // Resumable uploads (sessions, their parts, completion): the key, and the user token when sent.
  { service: 'records', pattern: /^\/files\/uploads(\/|$)/, auth: 'key' },
  // File downloads: an <img src> sends no header, so a file token (?token=) stands in for the key.
  { service: 'records', pattern: /^\/files\/[^/]+\/[^/]+\/[^/]+$/, auth: 'key-or-token', methods: ['GET', 'HEAD'] },
  // A stored file's bytes brought in with its project (`plinth projects import`): records lets only an operator.
  { service: 'records', pattern: /^\/files\/[^/]+\/[^/]+\/[^/]+$/, auth: 'key', methods: ['PUT'] },
  { service: 'records', pattern: /^\/files\/token$/, auth: 'key', methods: ['POST'] },
  { service: 'records', pattern: /^\/webhooks(\/|$)/, auth: 'key' },
  { service: 'auth', pattern: /^\/auth(\/|$)/, auth: 'key' },
  { service: 'auth', pattern: /^\/settings\/auth$/, auth: 'key' },
  { service: 'mailer', pattern: /^\/mailbox$/, auth: 'key' },
  { service: 'mailer', pattern: /^\/mail(\/|$)/, auth: 'key' },
];

export interface RouteMatch {
  project: ProjectId;
  service: ServiceName;
  auth: RouteAuth;
}

const PROJECT_PATH = /^\/v1\/projects\/([^/]+)(\/.*)$/;

/** The service that answers this request, or null when no route matches. */
export function matchRoute(method: string, path: string): RouteMatch | null {
  const m = PROJECT_PATH.exec(path);
  if (!m) return null;
  const [, project, rest] = m as unknown as [string, string, string];
  if (!isProjectId(project)) return null;
  for (const r of ROUTES) {
    if (r.pattern.test(rest) && (!r.methods || r.methods.includes(method))) {
      return { project, service: r.service, auth: r.auth };
    }
  }
  return null;
}
