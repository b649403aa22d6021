/**
 * `@plinth/client/admin`: helpers for the **secret key** — servers only, never a browser.
 * Mint user tokens, manage the user pool, collections, Auth settings and webhooks.
 */
import type { MfaFactor } from './auth/mfa';
import type { User } from './auth/types';
import { Transport, type CallOptions, type RequestSpec, type TransportOptions } from './transport';
import type { AuthSettings, FieldDefinition, JsonValue } from '@plinth/protocol';
import { webhooksAdmin, type WebhooksAdmin } from './webhooks';
import { recordsAdmin, type RecordsAdmin } from './admin-records';
import { portabilityAdmin, type PortabilityAdmin } from './portability';

export interface AdminClientOptions extends Omit<TransportOptions, 'key'> {
  /** The project's secret key (`sk_…`). */
  secretKey: string;
}

export interface MintedToken {
  access_token: string;
  token_type: 'Bearer';
  expires_at: string;
  expires_in: number;
}

/** A JSON value, as a field's `enum` and `default` hold. */
export type FieldValue = JsonValue;

/** A field of a collection definition (docs/records.md, "Field types" and "Field options"). */
export type { FieldDefinition } from '@plinth/protocol';

export interface CollectionRules {
  read?: string | null;
  create?: string | null;
  update?: string | null;
  delete?: string | null;
}

export interface CollectionInfo {
  name: string;
  /** Each definition with all three flags, and the options it was given. */
  fields: Record<string, FieldDefinition & Required<Pick<FieldDefinition, 'required' | 'unique' | 'indexed'>>>;
  rules: CollectionRules;
  revision: number;
  created_at: string;
  updated_at: string;
}

/** A project's Auth settings, as the settings API answers them. */
export type { AuthSettings } from '@plinth/protocol';

export interface NewUser {
  email: string;
  password?: string;
  display_name?: string;
  email_verified?: boolean;
}

export interface UserChange {
  status?: 'active' | 'disabled';
  display_name?: string | null;
  photo_url?: string | null;
  email_verified?: boolean;
  metadata?: Record<string, unknown>;
  /** Custom claims carried by the user's access tokens (`auth.token.<name>` in rules). */
  claims?: Record<string, unknown> | null;
}

export interface UserList {
  users: User[];
  total: number;
  limit: number;
  offset: number;
}

export interface AdminClient {
  /** Mints an access token for a user kept outside Plinth Auth (`expiresIn` 60–86400 s, default 3600). */
  mintToken(userId: string, opts?: CallOptions & { claims?: Record<string, unknown>; expiresIn?: number }): Promise<MintedToken>;
  users: {
    list(query?: { search?: string; limit?: number; offset?: number }, opts?: CallOptions): Promise<UserList>;
    create(user: NewUser, opts?: CallOptions): Promise<User>;
    get(id: string, opts?: CallOptions): Promise<User>;
    update(id: string, change: UserChange, opts?: CallOptions): Promise<User>;
    delete(id: string, opts?: CallOptions): Promise<void>;
    revokeSessions(id: string, opts?: CallOptions): Promise<void>;
    sendPasswordReset(id: string, opts?: CallOptions): Promise<void>;
    /** The user's second factors (two-factor sign-in; never their secrets). */
    factors(id: string, opts?: CallOptions): Promise<MfaFactor[]>;
    /** Removes the user's second factors (a lost authenticator): the user signs in with one factor again. */
    resetFactors(id: string, opts?: CallOptions): Promise<void>;
  };
  collections: {
    list(opts?: CallOptions): Promise<CollectionInfo[]>;
    get(name: string, opts?: CallOptions): Promise<CollectionInfo>;
    create(def: { name: string; fields: Record<string, FieldDefinition>; rules?: CollectionRules }, opts?: CallOptions): Promise<CollectionInfo>;
    update(name: string, change: { fields?: Record<string, FieldDefinition | null>; rules?: CollectionRules }, opts?: CallOptions): Promise<CollectionInfo>;
    delete(name: string, opts?: CallOptions): Promise<void>;
    /**
     * Checks fields and rules as saving them would (nothing is saved): resolves when they would be
     * accepted, rejects with the `PlinthError` saving would answer (400 with `details`) otherwise.
     */
    validate(name: string, def: { fields: Record<string, unknown>; rules?: Record<string, string | null> }, opts?: CallOptions): Promise<void>;
  };
  authSettings: {
    get(opts?: CallOptions): Promise<AuthSettings>;
    /** `dryRun`: the server's checks only, nothing stored — what the real update would answer. */
    update(change: Partial<AuthSettings> | Record<string, unknown>, opts?: CallOptions & { dryRun?: boolean }): Promise<AuthSettings>;
  };
  /** Records with the secret key: pages, a collection streamed, idempotent creates, restoring an export. */
  records: RecordsAdmin;
  /** The project's Auth settings with secrets and its users as stored, to move them to another deployment. */
  portability: PortabilityAdmin;
  /** Signed webhooks (docs/webhooks.md). */
  webhooks: WebhooksAdmin;
  /** A raw call for an endpoint this client has no method for: `path` under `/v1/projects/{project}`. */
  request<T>(spec: Omit<RequestSpec, 'payload' | 'onProgress'>): Promise<T>;
}

export function createAdminClient(opts: AdminClientOptions): AdminClient {
  const t = new Transport({ ...opts, key: opts.secretKey });
  const u = (id: string) => `/auth/users/${encodeURIComponent(id)}`;
  const c = (name: string) => `/collections/${encodeURIComponent(name)}`;
  return {
    mintToken: (userId, o = {}) =>
      t.request<MintedToken>({ method: 'POST', path: '/auth/tokens', body: { user_id: userId, claims: o.claims, expires_in: o.expiresIn }, signal: o.signal }),
    users: {
      list: (query = {}, o = {}) => t.request<UserList>({ method: 'GET', path: '/auth/users', query, signal: o.signal }),
      create: async (user, o = {}) => (await t.request<{ user: User }>({ method: 'POST', path: '/auth/users', body: user, signal: o.signal })).user,
      get: async (id, o = {}) => (await t.request<{ user: User }>({ method: 'GET', path: u(id), signal: o.signal })).user,
      update: async (id, change, o = {}) => (await t.request<{ user: User }>({ method: 'PATCH', path: u(id), body: change, signal: o.signal })).user,
      delete: async (id, o = {}) => void (await t.request({ method: 'DELETE', path: u(id), signal: o.signal })),
      revokeSessions: async (id, o = {}) => void (await t.request({ method: 'POST', path: `${u(id)}/revoke-sessions`, signal: o.signal })),
      sendPasswordReset: async (id, o = {}) => void (await t.request({ method: 'POST', path: `${u(id)}/send-reset`, signal: o.signal })),
      factors: async (id, o = {}) => (await t.request<{ factors: MfaFactor[] }>({ method: 'GET', path: `${u(id)}/mfa`, signal: o.signal })).factors,
      resetFactors: async (id, o = {}) => void (await t.request({ method: 'DELETE', path: `${u(id)}/mfa`, signal: o.signal })),
    },
    collections: {
      list: async (o = {}) => (await t.request<{ collections: CollectionInfo[] }>({ method: 'GET', path: '/collections', signal: o.signal })).collections,
      get: async (name, o = {}) => (await t.request<{ collection: CollectionInfo }>({ method: 'GET', path: c(name), signal: o.signal })).collection,
      create: async (def, o = {}) => (await t.request<{ collection: CollectionInfo }>({ method: 'POST', path: '/collections', body: def, signal: o.signal })).collection,
      update: async (name, change, o = {}) =>
        (await t.request<{ collection: CollectionInfo }>({ method: 'PATCH', path: c(name), body: change, signal: o.signal })).collection,
      delete: async (name, o = {}) => void (await t.request({ method: 'DELETE', path: c(name), signal: o.signal })),
      validate: async (name, def, o = {}) => void (await t.request({ method: 'POST', path: `${c(name)}/rules/validate`, body: def, signal: o.signal })),
    },
    authSettings: {
      get: (o = {}) => t.request<AuthSettings>({ method: 'GET', path: '/settings/auth', signal: o.signal }),
      update: (change, o = {}) =>
        t.request<AuthSettings>({ method: 'PATCH', path: '/settings/auth', query: o.dryRun ? { dry_run: 'true' } : undefined, body: change, signal: o.signal }),
    },
    records: recordsAdmin(t),
    portability: portabilityAdmin(t),
    webhooks: webhooksAdmin(t),
    request: (spec) => t.request(spec),
  };
}

export { ConflictError, PlinthError } from './errors';
export type { User } from './auth/types';
export type { NewWebhook, WebhookDelivery, WebhookEventType, WebhookInfo, WebhooksAdmin } from './webhooks';
export type { RecordListQuery, RecordPage, RecordsAdmin } from './admin-records';
export type { PortabilityAdmin, PortableUser } from './portability';
export type { RecordDoc } from '@plinth/protocol';
export { isNetworkError } from './errors';
