import * as oidc from 'openid-client';
import { InvalidRequestError, NotFoundError, UnavailableError, type ProjectId, type Session } from '@plinth/shared';
import { redirectAllowed, type ProviderSettings } from '../domain/oauth-providers';
import { githubProfile, profileFromIdToken, type ProviderProfile } from '../oauth/provider-profile';
import type { ProviderClient } from '../oauth/provider-clients';
import type { AuthContext } from './auth-context';
import { resolveAccount } from './oauth-accounts';
import {
  bindingCookieName,
  bindingMatches,
  EXCHANGE_TTL_MS,
  invalidGrant,
  putCode,
  randomCode,
  sha256,
  STATE_TTL_MS,
  takeCode,
  type StateData,
} from './oauth-grants';
import { completeSignIn } from './mfa-gate';

const BAD_STATE = 'The sign-in state is missing, invalid, expired, already used or was started in another browser. Start the sign-in again.';
const BAD_EXCHANGE = 'The code is invalid, expired or already used. Start the sign-in again.';

/** The provider's callback address: the one redirect URI to register with every provider of the project. */
export function callbackUrl(ctx: AuthContext, project: ProjectId): string {
  return `${ctx.oauth.publicUrl}/v1/projects/${project}/auth/oauth/callback`;
}

async function providerOf(ctx: AuthContext, project: ProjectId, name: string): Promise<{ settings: ProviderSettings; client: ProviderClient }> {
  const settings = (await ctx.settings.get(project)).providers[name];
  if (!settings || !settings.enabled) throw new NotFoundError(`No enabled sign-in provider "${name}" in this project.`);
  try {
    return { settings, client: await ctx.oauth.clients.client(project, name, settings, ctx.clock()) };
  } catch (err) {
    ctx.oauth.log.warn({ project, provider: name, reason: (err as Error).message }, 'oauth: provider discovery failed');
    throw new UnavailableError(`The provider "${name}" could not be reached or answered something unusable; try again later.`);
  }
}

/** What the start endpoint sends the browser: the provider's authorization URL, and the binding cookie. */
export interface StartedSignIn {
  authorizationUrl: string;
  cookie: { name: string; value: string; maxAgeS: number };
}

/**
 * Starts an authorization-code sign-in with PKCE (docs/auth.md "Sign-in with a provider"):
 * checks the redirect target against the project's `redirect_urls`, stores the state (single
 * use, 10 minutes) with the code verifier, nonce and a hash of a browser binding that goes into
 * a cookie. `linkUserId`: explicit linking for that signed-in user (from a link ticket).
 */
export async function startOAuth(ctx: AuthContext, project: ProjectId, provider: string, redirectTo: string, linkTicket?: string): Promise<StartedSignIn> {
  if (!redirectAllowed(redirectTo, (await ctx.settings.get(project)).redirect_urls)) {
    throw new InvalidRequestError('redirect_to is not one of the project\'s redirect_urls (Auth settings).', { field: 'redirect_to' });
  }
  let linkUserId = '';
  if (linkTicket !== undefined) {
    const ticket = await takeCode(ctx, project, 'oauth-link', linkTicket);
    if (!ticket || (ticket.data as { provider?: string } | null)?.provider !== provider) throw invalidGrant('The link ticket is invalid, expired or already used.');
    linkUserId = ticket.user_id;
  }
  const { client } = await providerOf(ctx, project, provider);
  const state = oidc.randomState();
  const verifier = oidc.randomPKCECodeVerifier();
  const nonce = client.kind.kind === 'oidc' ? oidc.randomNonce() : null;
  const binding = randomCode();
  const data: StateData = { provider, verifier, nonce, redirect_to: redirectTo, binding_hash: sha256(binding) };
  await putCode(ctx, project, 'oauth-state', state, linkUserId, STATE_TTL_MS, data);
  const params: { [k: string]: string } = {
    redirect_uri: callbackUrl(ctx, project),
    scope: client.scope,
    state,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  };
  if (nonce) params.nonce = nonce;
  if (client.kind.kind === 'oidc' && client.kind.formPost) params.response_mode = 'form_post';
  return {
    authorizationUrl: oidc.buildAuthorizationUrl(client.config, params).href,
    cookie: { name: bindingCookieName(state), value: binding, maxAgeS: STATE_TTL_MS / 1000 },
  };
}

/** Where the callback sends the browser: the app's target with `code`, or with `error` (never a token). */
function backToApp(target: string, params: { [k: string]: string }): string {
  const u = new URL(target);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.href;
}

/**
 * The provider's callback. An unusable state (forged, replayed, expired, or from another
 * browser) → 400 `invalid_grant` and no redirect. Otherwise the browser goes back to the app:
 * with a single-use exchange code (60 s) on success, or with `error` (access_denied,
 * oauth_failed, account_exists, account_disabled, email_required). No session is made here.
 */
export async function completeOAuth(
  ctx: AuthContext,
  project: ProjectId,
  params: { [k: string]: string },
  cookies: { [name: string]: string },
): Promise<{ redirect: string; clearCookie: string }> {
  const state = params.state ?? '';
  const taken = state ? await takeCode(ctx, project, 'oauth-state', state) : null;
  const data = taken?.data as StateData | null;
  const cookie = bindingCookieName(state);
  if (!taken || !data || !bindingMatches(cookies[cookie], data.binding_hash)) throw invalidGrant(BAD_STATE);
  const fail = (error: string, description: string) => ({ redirect: backToApp(data.redirect_to, { error, error_description: description }), clearCookie: cookie });
  if (params.error) return fail('access_denied', 'The provider did not sign the user in.');

  let profile: ProviderProfile;
  try {
    const { client } = await providerOf(ctx, project, data.provider);
    const current = new URL(callbackUrl(ctx, project));
    for (const [k, v] of Object.entries(params)) current.searchParams.set(k, v);
    const tokens = await oidc.authorizationCodeGrant(client.config, current, {
      pkceCodeVerifier: data.verifier,
      expectedState: state,
      ...(data.nonce ? { expectedNonce: data.nonce } : {}),
      idTokenExpected: client.kind.kind === 'oidc',
    });
    if (client.kind.kind === 'github') profile = await githubProfile(client, tokens.access_token);
    else {
      const claims = tokens.claims();
      if (!claims) throw new Error('no ID token');
      profile = profileFromIdToken(claims);
    }
  } catch (err) {
    // What was wrong goes to the log (no token, code or secret is in these messages), not to the app.
    // openid-client wraps oauth4webapi's error, whose cause names the claim that failed.
    const e = err as Error & { code?: unknown; cause?: { message?: unknown; claim?: unknown; cause?: { claim?: unknown } } };
    const claim = e.cause?.cause?.claim ?? e.cause?.claim;
    ctx.oauth.log.info({ project, provider: data.provider, reason: e.cause?.message ?? e.message, code: e.code, claim }, 'oauth: sign-in refused');
    return fail('oauth_failed', 'The provider\'s answer could not be verified.');
  }
  const outcome = await resolveAccount(ctx, project, data.provider, profile, taken.user_id || null);
  if ('refused' in outcome) return fail(outcome.refused, REFUSALS[outcome.refused]);
  const code = randomCode();
  await putCode(ctx, project, 'oauth-exchange', code, outcome.user.id, EXCHANGE_TTL_MS, { provider: data.provider });
  return { redirect: backToApp(data.redirect_to, { code }), clearCookie: cookie };
}

const REFUSALS = {
  account_exists: 'A user with this e-mail exists; sign in to it and link the provider from there.',
  account_disabled: 'This account is disabled.',
  email_required: 'The provider gave no e-mail address.',
} as const;

/**
 * `POST /auth/oauth/exchange`: trades the single-use code the app was sent back with for a
 * session (or, with two-factor sign-in on, 401 `mfa_required`). Unknown, expired or used → 400
 * `invalid_grant`.
 */
export async function exchangeOAuthCode(ctx: AuthContext, project: ProjectId, code: string): Promise<Session> {
  const taken = await takeCode(ctx, project, 'oauth-exchange', code);
  const user = taken ? await ctx.users.getUser(project, taken.user_id) : null;
  if (!user || user.status !== 'active') throw invalidGrant(BAD_EXCHANGE);
  // The one gate every sign-in issues its session through (password, code, provider): a user
  // with an active second factor gets 401 mfa_required and a challenge instead (docs/auth.md).
  return completeSignIn(ctx, project, user);
}
