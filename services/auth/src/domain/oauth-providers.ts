import Joi from 'joi';
import { InvalidRequestError } from '@plinth/shared';

/**
 * One sign-in provider of a project, as stored in its Auth settings (docs/auth.md "Sign-in with
 * a provider"). The key of the `providers` map names it: `google`, `microsoft`, `apple` and
 * `github` are presets; any other name is a generic OpenID Connect provider with an `issuer`.
 */
export interface ProviderSettings {
  enabled: boolean;
  client_id: string;
  /** Write-only: never answered by the settings API (see publicProviders). */
  client_secret: string;
  /** Generic OpenID Connect providers: the issuer URL (discovery at `/.well-known/openid-configuration`). */
  issuer?: string;
  /** `microsoft`: the directory (tenant) id (required). */
  tenant?: string;
  /** `github`: GitHub Enterprise Server's address (default https://github.com) and its API's. */
  github_url?: string;
  github_api_url?: string;
  /** Scopes besides the preset's (`openid email profile` for OpenID Connect, `read:user user:email` for GitHub). */
  scopes?: string[];
}

export type ProviderMap = { [name: string]: ProviderSettings };

/** What the settings API answers for a provider: no secret, only whether one is set. */
export type PublicProviderSettings = Omit<ProviderSettings, 'client_secret'> & { client_secret_set: boolean };

export const MAX_PROVIDERS = 10;
export const PROVIDER_NAME = /^[a-z][a-z0-9-]{0,31}$/;

/** How a provider is spoken to. */
export type ProviderKind = { kind: 'oidc'; issuer: string; formPost: boolean } | { kind: 'github'; webUrl: string; apiUrl: string };

/** The issuer (or GitHub addresses) of a provider by its name and settings. */
export function providerKind(name: string, p: ProviderSettings): ProviderKind {
  switch (name) {
    case 'google':
      return { kind: 'oidc', issuer: 'https://accounts.google.com', formPost: false };
    case 'microsoft':
      return { kind: 'oidc', issuer: `https://login.microsoftonline.com/${p.tenant ?? ''}/v2.0`, formPost: false };
    case 'apple':
      // Apple posts the answer (form_post) when the e-mail scope is asked for.
      return { kind: 'oidc', issuer: 'https://appleid.apple.com', formPost: true };
    case 'github':
      return { kind: 'github', webUrl: p.github_url ?? 'https://github.com', apiUrl: p.github_api_url ?? 'https://api.github.com' };
    default:
      return { kind: 'oidc', issuer: p.issuer ?? '', formPost: false };
  }
}

const url = Joi.string().uri({ scheme: ['http', 'https'] }).max(2048);

/** One provider in a PATCH: `client_secret` may be left out to keep the stored one. */
const providerPatchSchema = Joi.object({
  enabled: Joi.boolean().strict().default(true),
  client_id: Joi.string().min(1).max(512).required(),
  client_secret: Joi.string().min(1).max(4096),
  issuer: url,
  tenant: Joi.string().pattern(/^[A-Za-z0-9.-]{1,64}$/),
  github_url: url,
  github_api_url: url,
  scopes: Joi.array().items(Joi.string().pattern(/^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/)).max(20),
});

/** `providers` in a PATCH of settings/auth: name → settings, or null to remove the provider. */
export const providersPatchSchema = Joi.object()
  .pattern(PROVIDER_NAME, providerPatchSchema.allow(null))
  .max(MAX_PROVIDERS)
  .messages({ 'object.unknown': 'provider names are 1-32 lower-case letters, digits and dashes, starting with a letter' });

export type ProvidersPatch = { [name: string]: (Omit<ProviderSettings, 'client_secret'> & { client_secret?: string }) | null };

/** Refuses an address that is not https, unless the operator allows http (PLINTH_OAUTH_ALLOW_HTTP). */
export function checkProviderUrl(field: string, value: string, allowHttp: boolean): void {
  if (new URL(value).protocol !== 'https:' && !allowHttp) {
    throw new InvalidRequestError(`${field} must be an https address (PLINTH_OAUTH_ALLOW_HTTP allows http for local testing).`, { field });
  }
}

/**
 * The providers after a PATCH: entries merged over the stored ones (a missing `client_secret`
 * keeps the stored secret), null entries removed. Checks what the schema cannot: a generic
 * provider has an issuer, every provider ends up with a secret, addresses are https.
 */
export function mergeProviders(current: ProviderMap, patch: ProvidersPatch, allowHttp: boolean): ProviderMap {
  const next: ProviderMap = { ...current };
  for (const [name, entry] of Object.entries(patch)) {
    if (entry === null) {
      delete next[name];
      continue;
    }
    const secret = entry.client_secret ?? current[name]?.client_secret;
    if (!secret) throw new InvalidRequestError(`providers.${name}.client_secret is required for a new provider.`, { field: `providers.${name}.client_secret` });
    if (name === 'microsoft' && (!entry.tenant || ['common', 'organizations', 'consumers'].includes(entry.tenant))) {
      throw new InvalidRequestError('providers.microsoft.tenant is required: your directory (tenant) id.', { field: 'providers.microsoft.tenant' });
    }
    const preset = ['google', 'microsoft', 'apple', 'github'].includes(name);
    if (!preset && !entry.issuer) throw new InvalidRequestError(`providers.${name}.issuer is required (the provider's OpenID Connect issuer URL).`, { field: `providers.${name}.issuer` });
    for (const field of ['issuer', 'github_url', 'github_api_url'] as const) {
      const value = entry[field];
      if (value !== undefined) checkProviderUrl(`providers.${name}.${field}`, value, allowHttp);
    }
    next[name] = { ...entry, client_secret: secret };
  }
  if (Object.keys(next).length > MAX_PROVIDERS) throw new InvalidRequestError(`At most ${MAX_PROVIDERS} providers.`, { field: 'providers' });
  return next;
}

/** The providers as the settings API shows them: secrets left out. */
export function publicProviders(providers: ProviderMap): { [name: string]: PublicProviderSettings } {
  const out: { [name: string]: PublicProviderSettings } = {};
  for (const [name, { client_secret, ...rest }] of Object.entries(providers)) out[name] = { ...rest, client_secret_set: client_secret.length > 0 };
  return out;
}

/**
 * Whether `target` may receive the browser after a provider sign-in: its origin and path equal
 * an entry of the project's `redirect_urls` (the query may differ; a fragment is refused).
 */
export function redirectAllowed(target: string, allowList: readonly string[]): boolean {
  let u: URL;
  try {
    u = new URL(target);
  } catch {
    return false;
  }
  if (u.hash || u.username || u.password || !['http:', 'https:'].includes(u.protocol)) return false;
  return allowList.some((entry) => {
    const a = new URL(entry);
    return a.origin === u.origin && a.pathname === u.pathname;
  });
}
