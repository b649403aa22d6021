/**
 * `@plinth/client/operator`: the operator API (`/v1/admin`, docs/operators.md) with the operator
 * key or a named operator's session token — projects and their keys, operators, their sessions,
 * the audit log, a project's export and import. For servers and tools (the `plinth` CLI), never a
 * browser page anyone can open.
 */
import type { AuditEntry, HashedProjectKey, Operator, OperatorRole, OperatorSession, Project, ProjectKey } from '@plinth/protocol';
import { Transport, type CallOptions, type RequestSpec } from './transport';

export interface OperatorClientOptions {
  /** The gateway's base URL, e.g. `http://localhost:8080`. */
  url: string;
  /** The operator key (`adm_…`) or an operator's session token. */
  adminKey: string;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
}

/** A new project's keys, shown this once. */
export interface CreatedProject {
  project: Project;
  keys: { public: string; secret: string };
}

/** What deleting a project answers: its data is purged from every service (`pending` while one could not be reached yet). */
export interface ProjectDeletion {
  deleted: true;
  id: string;
  purge: unknown;
}

/** The project and its keys, hashed: what a project archive starts with (docs/operators.md "Moving a project"). */
export interface ProjectExport {
  project: Project;
  keys: HashedProjectKey[];
}

export interface AuditQuery {
  /** Operator id or e-mail, key id or prefix. */
  actor?: string;
  project?: string;
  /** ISO times. */
  since?: string;
  until?: string;
  limit?: number;
  /** `next_cursor` of the page before. */
  cursor?: string;
}

export interface AuditPage {
  entries: AuditEntry[];
  next_cursor: string | null;
}

/** What `/healthz` answers: `service` is `gateway` for a Plinth gateway. */
export interface Health {
  service?: string;
  [k: string]: unknown;
}

/**
 * `GET {url}/healthz` (`/readyz` with `ready`) without any key: whether a Plinth gateway answers
 * at `url` (or is ready: every store reachable). A 503 or no answer rejects with a `PlinthError`.
 */
export function probe(url: string, what: 'healthz' | 'readyz', opts: CallOptions & { fetch?: typeof fetch } = {}): Promise<Health> {
  return new Transport({ url, project: '', key: '', fetch: opts.fetch }, '').request({ method: 'GET', path: `/${what}`, signal: opts.signal });
}

export interface Deleted {
  deleted: true;
  id: string;
}

/** A raw call to the operator API, for an endpoint this client has no method for: path under `/v1/admin`. */
export type OperatorRequest = Omit<RequestSpec, 'payload' | 'onProgress'>;

export interface OperatorClient {
  projects: {
    list(opts?: CallOptions): Promise<Project[]>;
    create(project?: { id?: string; name?: string }, opts?: CallOptions): Promise<CreatedProject>;
    get(id: string, opts?: CallOptions): Promise<{ project: Project; keys: ProjectKey[] }>;
    delete(id: string, opts?: CallOptions): Promise<ProjectDeletion>;
    /** The project and its keys hashed (an operator of role admin or the operator key). */
    export(id: string, opts?: CallOptions): Promise<ProjectExport>;
    /** Creates a project from an export on this deployment (409 when the id or a key is taken). */
    import(exported: ProjectExport, opts?: CallOptions): Promise<{ project: Project; keys: ProjectKey[] }>;
  };
  keys: {
    /** A new key; its `value` is shown this once. */
    create(project: string, kind: 'public' | 'secret', opts?: CallOptions): Promise<ProjectKey & { value: string }>;
    revoke(project: string, keyId: string, opts?: CallOptions): Promise<Deleted>;
  };
  operators: {
    list(opts?: CallOptions): Promise<Operator[]>;
    get(id: string, opts?: CallOptions): Promise<Operator>;
    create(operator: { email: string; role: OperatorRole; password: string }, opts?: CallOptions): Promise<Operator>;
    /** `status: 'disabled'` or a new password also ends every session of the operator. */
    update(id: string, change: { role?: OperatorRole; status?: 'active' | 'disabled'; password?: string }, opts?: CallOptions): Promise<Operator>;
    /** Removes the operator's second factor (a lost authenticator). */
    resetTotp(id: string, opts?: CallOptions): Promise<Operator>;
    delete(id: string, opts?: CallOptions): Promise<Deleted>;
  };
  sessions: {
    /** Every operator's live sessions for an owner or the operator key; one's own otherwise. */
    list(opts?: CallOptions): Promise<OperatorSession[]>;
    revoke(id: string, opts?: CallOptions): Promise<Deleted>;
  };
  /** The audit log, newest first, a page at a time. */
  audit(query?: AuditQuery, opts?: CallOptions): Promise<AuditPage>;
  /** What the server believes about itself: the public URL its mails link to. */
  server(opts?: CallOptions): Promise<{ public_url: string | null }>;
  request<T>(spec: OperatorRequest): Promise<T>;
}

export function createOperatorClient(opts: OperatorClientOptions): OperatorClient {
  const t = new Transport({ url: opts.url, project: '', key: opts.adminKey, fetch: opts.fetch }, '/v1/admin');
  if (!opts.adminKey) throw new TypeError('Plinth: adminKey is required.');
  const p = (id: string) => `/projects/${encodeURIComponent(id)}`;
  const op = (id: string) => `/operators/${encodeURIComponent(id)}`;
  const one = async (spec: RequestSpec) => (await t.request<{ operator: Operator }>(spec)).operator;
  return {
    projects: {
      list: async (o = {}) => (await t.request<{ projects: Project[] }>({ method: 'GET', path: '/projects', signal: o.signal })).projects,
      create: (project = {}, o = {}) => t.request({ method: 'POST', path: '/projects', body: project, signal: o.signal }),
      get: (id, o = {}) => t.request({ method: 'GET', path: p(id), signal: o.signal }),
      delete: (id, o = {}) => t.request({ method: 'DELETE', path: p(id), signal: o.signal }),
      export: (id, o = {}) => t.request({ method: 'GET', path: `${p(id)}/export`, signal: o.signal }),
      import: (exported, o = {}) => t.request({ method: 'POST', path: '/projects/import', body: exported, signal: o.signal }),
    },
    keys: {
      create: async (project, kind, o = {}) =>
        (await t.request<{ key: ProjectKey & { value: string } }>({ method: 'POST', path: `${p(project)}/keys`, body: { kind }, signal: o.signal })).key,
      revoke: (project, keyId, o = {}) => t.request({ method: 'DELETE', path: `${p(project)}/keys/${encodeURIComponent(keyId)}`, signal: o.signal }),
    },
    operators: {
      list: async (o = {}) => (await t.request<{ operators: Operator[] }>({ method: 'GET', path: '/operators', signal: o.signal })).operators,
      get: (id, o = {}) => one({ method: 'GET', path: op(id), signal: o.signal }),
      create: (operator, o = {}) => one({ method: 'POST', path: '/operators', body: operator, signal: o.signal }),
      update: (id, change, o = {}) => one({ method: 'PATCH', path: op(id), body: change, signal: o.signal }),
      resetTotp: (id, o = {}) => one({ method: 'DELETE', path: `${op(id)}/totp`, signal: o.signal }),
      delete: (id, o = {}) => t.request({ method: 'DELETE', path: op(id), signal: o.signal }),
    },
    sessions: {
      list: async (o = {}) => (await t.request<{ sessions: OperatorSession[] }>({ method: 'GET', path: '/sessions', signal: o.signal })).sessions,
      revoke: (id, o = {}) => t.request({ method: 'DELETE', path: `/sessions/${encodeURIComponent(id)}`, signal: o.signal }),
    },
    audit: (query = {}, o = {}) => t.request({ method: 'GET', path: '/audit', query: { ...query }, signal: o.signal }),
    server: (o = {}) => t.request({ method: 'GET', path: '/server', signal: o.signal }),
    request: (spec) => t.request(spec),
  };
}

export { ConflictError, PlinthError, isNetworkError } from './errors';
export type { AuditEntry, HashedProjectKey, Operator, OperatorRole, OperatorSession, Project, ProjectKey } from '@plinth/protocol';
