/**
 * Connection settings and HTTP calls of the CLI. Self-contained on purpose (node's fetch and
 * fs only): the CLI is packed on its own (`npm run pack:cli`) and runs without the workspace.
 */
import fs from 'node:fs';
import path from 'node:path';

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

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

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

  async call(method: string, pathname: string, opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<ApiResponse> {
    let res: Response;
    try {
      res = await fetch(this.url + pathname, {
        method,
        headers: {
          ...(opts.key ? { Authorization: `Bearer ${opts.key}` } : {}),
          ...(opts.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
          ...opts.headers,
        },
        body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(`cannot reach ${this.url}: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
    }
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body, text };
  }

  /** A call that must succeed (2xx): the body, else a CliError with the status and the error. */
  async ok<T = unknown>(method: string, pathname: string, opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<T> {
    const r = await this.call(method, pathname, opts);
    if (r.status < 200 || r.status > 299) {
      const b = r.body as { error?: string; message?: string } | string;
      const why = typeof b === 'object' && b && b.message ? `${b.error}: ${b.message}` : r.text.slice(0, 300);
      throw new CliError(`${method} ${pathname} → ${r.status} ${why}`);
    }
    return r.body as T;
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
}

export function printJson(io: CliIo, value: unknown): void {
  io.out.write(`${JSON.stringify(value, null, 2)}\n`);
}
