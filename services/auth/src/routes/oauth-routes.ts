import { Router, type Request, type Response } from 'express';
import { InvalidRequestError, requestContext } from '@plinth/shared';
import type { AuthContext } from '../flows/auth-context';
import { completeOAuth, startOAuth } from '../flows/oauth-sign-in';
import { requireAuthEnabled } from './guards';
import type { RateLimits } from './rate-limits';

const BASE = '/v1/projects/:project/auth/oauth';
/** Callback parameters read (OAuth 2.0, OpenID Connect, form_post); anything else is ignored. */
const CALLBACK_PARAMS = ['code', 'state', 'error', 'error_description', 'iss', 'session_state', 'user'];

const one = (v: unknown, max: number): string | undefined => (typeof v === 'string' && v.length <= max ? v : undefined);

/** The request's cookies (at most 50, each at most 4 KB). */
function cookiesOf(req: Request): { [name: string]: string } {
  const out: { [name: string]: string } = {};
  const header = req.get('cookie') ?? '';
  for (const part of header.split(';').slice(0, 50)) {
    const at = part.indexOf('=');
    if (at <= 0 || part.length > 4096) continue;
    const name = part.slice(0, at).trim();
    try {
      out[name] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      // a malformed cookie of another site part is skipped
    }
  }
  return out;
}

/**
 * The binding cookie: http-only, only sent to the OAuth paths of the project. Over https it is
 * `Secure; SameSite=None` so a provider's form_post callback (Apple) carries it; over http
 * (local testing) `SameSite=Lax`, which top-level redirects back from the provider carry.
 */
function cookieHeader(req: Request, project: string, name: string, value: string, maxAgeS: number): string {
  const site = req.secure ? 'Secure; SameSite=None' : 'SameSite=Lax';
  return `${name}=${value}; Path=/v1/projects/${project}/auth/oauth/; Max-Age=${maxAgeS}; HttpOnly; ${site}`;
}

function redirect(res: Response, to: string): void {
  res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' }).redirect(302, to);
}

/**
 * The browser's side of a provider sign-in (docs/auth.md "Sign-in with a provider"): plain
 * navigations, so no project key (the gateway routes them without one), full paths.
 * - `GET /oauth/{provider}/start?redirect_to=…[&link=…]` → 302 to the provider, with the binding cookie;
 * - `GET|POST /oauth/callback` (POST: a provider's form_post) → 302 back to the app with `code` or `error`.
 */
export function oauthBrowserRoutes(ctx: AuthContext, rateLimits: RateLimits): Router {
  const r = Router();
  const enabled = requireAuthEnabled(ctx.settings);

  r.get(`${BASE}/:provider/start`, enabled, ...rateLimits.endpoints.oauth, async (req, res) => {
    const { project } = requestContext(res);
    const redirectTo = one(req.query.redirect_to, 2048);
    if (!redirectTo) throw new InvalidRequestError('redirect_to is required (one URL, at most 2048 characters).', { field: 'redirect_to' });
    const link = req.query.link === undefined ? undefined : (one(req.query.link, 200) ?? '');
    const started = await startOAuth(ctx, project, String(req.params.provider), redirectTo, link);
    res.append('Set-Cookie', cookieHeader(req, project, started.cookie.name, started.cookie.value, started.cookie.maxAgeS));
    redirect(res, started.authorizationUrl);
  });

  const callback = async (req: Request, res: Response): Promise<void> => {
    const { project } = requestContext(res);
    const source = (req.method === 'POST' ? req.body : req.query) as { [k: string]: unknown } | undefined;
    const params: { [k: string]: string } = {};
    for (const name of CALLBACK_PARAMS) {
      const v = one(source?.[name], 4096);
      if (v !== undefined) params[name] = v;
    }
    const done = await completeOAuth(ctx, project, params, cookiesOf(req));
    res.append('Set-Cookie', cookieHeader(req, project, done.clearCookie, '', 0));
    redirect(res, done.redirect);
  };
  r.get(`${BASE}/callback`, enabled, ...rateLimits.endpoints.oauth, callback);
  r.post(`${BASE}/callback`, enabled, ...rateLimits.endpoints.oauth, callback);
  return r;
}
