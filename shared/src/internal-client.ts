import { randomUUID } from 'node:crypto';
import { internalHeaders, type KeyKind } from './internal-auth';
import { PlinthError, UnavailableError, type ErrorEnvelope } from './errors';

export interface InternalClientOptions {
  /** Base URL of the other service (several, comma-separated, are tried round-robin). */
  baseUrl: string;
  internalSecret: string;
  /** Per-request timeout. */
  timeoutMs?: number;
}

/**
 * Service → service calls in cluster mode (e.g. records fetching auth's JWKS, the mailer reading a
 * project's mail settings). Each call carries the same signed internal credential the gateway
 * sends, so the callee's chassis accepts it. Errors come back as the callee's PlinthError; a
 * callee that cannot be reached is 503 `unavailable`.
 */
export class InternalClient {
  private readonly urls: string[];
  private next = 0;

  constructor(private readonly opts: InternalClientOptions) {
    this.urls = opts.baseUrl.split(',').map((u) => u.trim().replace(/\/+$/, '')).filter(Boolean);
    if (this.urls.length === 0) throw new Error('InternalClient needs a base URL');
  }

  async getJson<T>(project: string, keyKind: KeyKind, path: string): Promise<T> {
    return this.send<T>(project, keyKind, 'GET', path);
  }

  /** POSTs a JSON body; `headers` are added (e.g. the user token the callee should verify). */
  async postJson<T>(project: string, keyKind: KeyKind, path: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
    return this.send<T>(project, keyKind, 'POST', path, body, headers);
  }

  /** One signed call with an optional JSON body; the answer's JSON, or the callee's error. */
  async send<T>(
    project: string,
    keyKind: KeyKind,
    method: string,
    path: string,
    json?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    const base = this.urls[this.next++ % this.urls.length]!;
    const requestId = randomUUID();
    const body = json === undefined ? undefined : JSON.stringify(json);
    let res: Response;
    try {
      res = await fetch(base + path, {
        method,
        headers: {
          ...headers,
          ...internalHeaders(this.opts.internalSecret, { project, keyKind, requestId }, { method, path }, body),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body,
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 5000),
      });
    } catch {
      throw new UnavailableError(`Cannot reach ${base}.`);
    }
    const answer = (await res.json().catch(() => null)) as unknown;
    if (!res.ok) {
      const env = answer as Partial<ErrorEnvelope> | null;
      if (env && typeof env.error === 'string' && typeof env.message === 'string') {
        throw new PlinthError(env.error, env.message, env.details);
      }
      throw new UnavailableError(`${base} answered ${res.status}.`);
    }
    return answer as T;
  }
}
