/**
 * The CLI's connection: where the deployment is and which keys to use (flags, environment, a
 * standalone data directory's credentials.json), and the SDK clients that make every call —
 * `@plinth/client/operator` with the operator key, `@plinth/client/admin` with a project's secret
 * key; an SDK error becomes one line (`describeError`). (A project archive's file bytes stream
 * apart, archive/file-transfer.ts: the SDK has no streamed body.)
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AdminClient, PlinthError } from '@plinth/client/admin';
import type { OperatorClient } from '@plinth/client/operator';

/** The SDK, loaded with the first call (`plinth --version` and `help` never load it). */
const sdk = {
  admin: (): typeof import('@plinth/client/admin') => require('@plinth/client/admin'),
  operator: (): typeof import('@plinth/client/operator') => require('@plinth/client/operator'),
};

export interface CliIo {
  env: NodeJS.ProcessEnv;
  out: { write(s: string): unknown };
  err: { write(s: string): unknown };
  /** Read for `records import -` (defaults to process.stdin). */
  stdin?: NodeJS.ReadableStream;
}

/** Wrong usage: exit code 2 and one line. */
export class UsageError extends Error {}
/** A failed call or check: exit code 1 and one line. */
export class CliError extends Error {}

export interface ConnectionFlags {
  url?: string;
  'admin-key'?: string;
  'secret-key'?: string;
  project?: string;
  'data-dir'?: string;
}

interface StoredCredentials {
  admin_key?: string;
  demo?: { public: string; secret: string };
}

function readCredentials(dataDir: string): StoredCredentials {
  try {
    return JSON.parse(fs.readFileSync(path.join(dataDir, 'credentials.json'), 'utf8')) as StoredCredentials;
  } catch {
    return {};
  }
}

/** Why a call failed, in one line: `POST /v1/admin/projects/import → 409 conflict: …`, or that nothing answered. */
export function describeError(e: PlinthError, url: string): string {
  if (e.status === 0) {
    const cause = (e.cause as { cause?: { code?: string; message?: string } } | undefined)?.cause;
    return `cannot reach ${url}: ${cause?.code ?? cause?.message ?? e.message}`;
  }
  return `${e.request ?? 'a call'} → ${e.status} ${e.code}: ${e.message}`;
}

/** What `call` answers: the status and the body (an error's envelope), never throwing on a 4xx or 5xx. */
export interface ApiResponse {
  status: number;
  body: unknown;
}

type CallOpts = { key?: string; body?: unknown; headers?: Record<string, string> };
type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export class Connection {
  readonly url: string;
  readonly project: string;
  private readonly creds: () => StoredCredentials;

  constructor(
    private readonly flags: ConnectionFlags,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.url = (flags.url ?? env.PLINTH_URL ?? env.PLINTH ?? 'http://localhost:8080').replace(/\/+$/, '');
    this.project = flags.project ?? env.PLINTH_PROJECT ?? 'demo';
    let cached: StoredCredentials | undefined;
    const dataDir = flags['data-dir'] ?? env.PLINTH_DATA_DIR ?? './data';
    this.creds = () => (cached ??= readCredentials(dataDir));
  }

  adminKey(): string | undefined {
    return this.flags['admin-key'] ?? this.env.PLINTH_ADMIN_KEY ?? this.creds().admin_key;
  }

  secretKey(): string | undefined {
    return this.flags['secret-key'] ?? this.env.PLINTH_SECRET_KEY ?? (this.project === 'demo' ? this.creds().demo?.secret : undefined);
  }

  /** `/v1/projects/{project}` + rest */
  projectPath(rest: string): string {
    return `/v1/projects/${encodeURIComponent(this.project)}${rest}`;
  }

  requireAdminKey(): string {
    const key = this.adminKey();
    if (!key) throw new UsageError('no operator key: pass --admin-key or set PLINTH_ADMIN_KEY');
    return key;
  }

  requireSecretKey(): string {
    const key = this.secretKey();
    if (!key) throw new UsageError(`no secret key for project "${this.project}": pass --secret-key or set PLINTH_SECRET_KEY`);
    return key;
  }

  /** The operator API with the operator key (`key`, else the one configured). */
  operator(key: string = this.requireAdminKey()): OperatorClient {
    return sdk.operator().createOperatorClient({ url: this.url, adminKey: key });
  }

  /** A project's API with its secret key (default: the configured project and key). */
  admin(project: string = this.project, key: string = this.requireSecretKey()): AdminClient {
    return sdk.admin().createAdminClient({ url: this.url, project, secretKey: key });
  }

  /**
   * A call by its full path (`/v1/admin/…` with the operator key, `/v1/projects/{p}/…` with a
   * secret key of `p`), through the SDK's clients; resolves to the body of a 2xx answer, rejects
   * with the SDK's `PlinthError` otherwise. For the project archive's sections, which address the
   * API by path.
   */
  async ok<T = unknown>(method: Method, pathname: string, opts: CallOpts = {}): Promise<T> {
    const [where, search = ''] = pathname.split('?', 2) as [string, string?];
    const query = Object.fromEntries(new URLSearchParams(search));
    const spec = { method, query, body: opts.body, headers: opts.headers };
    if (where.startsWith('/v1/admin/')) return this.operator(opts.key ?? this.requireAdminKey()).request<T>({ ...spec, path: where.slice('/v1/admin'.length) });
    const m = /^\/v1\/projects\/([^/]+)(\/.*)$/.exec(where);
    if (!m) throw new CliError(`${pathname} is not a path of the Plinth API`);
    return this.admin(decodeURIComponent(m[1]!), opts.key ?? this.requireSecretKey()).request<T>({ ...spec, path: m[2]! });
  }

  /** `ok`, answering an error status instead of rejecting (a call that got no answer still rejects). */
  async call(method: Method, pathname: string, opts: CallOpts = {}): Promise<ApiResponse> {
    try {
      return { status: 200, body: await this.ok(method, pathname, opts) };
    } catch (e) {
      if (!(e instanceof sdk.admin().PlinthError) || e.status === 0) throw e;
      return { status: e.status, body: { error: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) } };
    }
  }
}

export function printJson(io: CliIo, value: unknown): void {
  io.out.write(`${JSON.stringify(value, null, 2)}\n`);
}
