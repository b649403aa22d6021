import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';
import type { ProjectId } from '@plinth/shared';
import { providerKind, type ProviderKind, type ProviderSettings } from '../domain/oauth-providers';
import { boundedFetch } from './bounded-fetch';

export interface ProviderClientOptions {
  /** Provider addresses may be http (PLINTH_OAUTH_ALLOW_HTTP; local testing only). */
  allowHttp: boolean;
  /** Longest wait for one provider request, ms. */
  fetchTimeoutMs: number;
  /** Largest provider answer, bytes. */
  maxResponseBytes: number;
}

/** A provider ready to be spoken to: its openid-client configuration and how it is reached. */
export interface ProviderClient {
  name: string;
  kind: ProviderKind;
  config: oidc.Configuration;
  scope: string;
}

/** Discovery documents are kept this long per replica, then fetched again. */
const DISCOVERY_TTL_MS = 10 * 60_000;
const MAX_CACHED = 1000;

/**
 * openid-client configurations of the projects' providers (docs/auth.md "Sign-in with a
 * provider"). OpenID Connect providers are discovered from their issuer (and cached); GitHub is
 * plain OAuth 2.0 with its documented endpoints.
 */
export class ProviderClients {
  private readonly cache = new Map<string, { client: ProviderClient; until: number }>();
  private readonly fetch: oidc.CustomFetch;

  constructor(private readonly opts: ProviderClientOptions) {
    this.fetch = boundedFetch(opts.fetchTimeoutMs, opts.maxResponseBytes);
  }

  get allowHttp(): boolean {
    return this.opts.allowHttp;
  }

  async client(project: ProjectId, name: string, settings: ProviderSettings, now: number): Promise<ProviderClient> {
    const kind = providerKind(name, settings);
    const secretHash = createHash('sha256').update(settings.client_secret).digest('base64url');
    const key = JSON.stringify([project, name, kind, settings.client_id, secretHash, settings.scopes ?? []]);
    const hit = this.cache.get(key);
    if (hit && hit.until > now) return hit.client;
    const client = kind.kind === 'github' ? this.github(name, kind, settings) : await this.discover(name, kind, settings);
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, { client, until: now + DISCOVERY_TTL_MS });
    return client;
  }

  private prepare(config: oidc.Configuration): void {
    config[oidc.customFetch] = this.fetch;
    config.timeout = Math.ceil(this.opts.fetchTimeoutMs / 1000);
    if (this.opts.allowHttp) oidc.allowInsecureRequests(config);
  }

  private async discover(name: string, kind: Extract<ProviderKind, { kind: 'oidc' }>, settings: ProviderSettings): Promise<ProviderClient> {
    const issuer = new URL(kind.issuer);
    if (issuer.protocol !== 'https:' && !this.opts.allowHttp) throw new Error(`issuer ${kind.issuer} is not https`);
    const config = await oidc.discovery(issuer, settings.client_id, undefined, oidc.ClientSecretPost(settings.client_secret), {
      [oidc.customFetch]: this.fetch,
      timeout: Math.ceil(this.opts.fetchTimeoutMs / 1000),
      execute: this.opts.allowHttp ? [oidc.allowInsecureRequests] : [],
    });
    this.prepare(config);
    return { name, kind, config, scope: ['openid', 'email', ...(name === 'apple' ? ['name'] : ['profile']), ...(settings.scopes ?? [])].join(' ') };
  }

  private github(name: string, kind: Extract<ProviderKind, { kind: 'github' }>, settings: ProviderSettings): ProviderClient {
    for (const u of [kind.webUrl, kind.apiUrl]) {
      if (new URL(u).protocol !== 'https:' && !this.opts.allowHttp) throw new Error(`${u} is not https`);
    }
    const web = kind.webUrl.replace(/\/+$/, '');
    const config = new oidc.Configuration(
      { issuer: web, authorization_endpoint: `${web}/login/oauth/authorize`, token_endpoint: `${web}/login/oauth/access_token` },
      settings.client_id,
      undefined,
      oidc.ClientSecretPost(settings.client_secret),
    );
    this.prepare(config);
    return { name, kind, config, scope: ['read:user', 'user:email', ...(settings.scopes ?? [])].join(' ') };
  }
}
