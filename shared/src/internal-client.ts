import { randomUUID } from 'node:crypto';
import { INTERNAL_HEADERS, signInternal, type KeyKind } from './internal-auth';
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
    return this.call<T>('GET', project, keyKind, path);
  }

  /** POSTs a JSON body; `headers` are added (e.g. the user token the callee should verify). */
  async postJson<T>(project: string, keyKind: KeyKind, path: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
    return this.call<T>('POST', project, keyKind, path, body, headers);
  }

  private async call<T>(
    method: 'GET' | 'POST',
    project: string,
    keyKind: KeyKind,
    path: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    const base = this.urls[this.next++ % this.urls.length]!;
    const requestId = randomUUID();
    let res: Response;
    try {
      res = await fetch(base + path, {
        method,
        headers: {
          ...headers,
          ...(payload === undefined ? {} : { 'Content-Type': 'application/json' }),
          [INTERNAL_HEADERS.project]: project,
          [INTERNAL_HEADERS.keyKind]: keyKind,
          [INTERNAL_HEADERS.requestId]: requestId,
          [INTERNAL_HEADERS.credential]: signInternal(this.opts.internalSecret, { project, keyKind, requestId }),
        },
        body: payload === undefined ? undefined : JSON.stringify(payload),
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 5000),
      });
    } catch {
      throw new UnavailableError(`Cannot reach ${base}.`);
    }
    const body = (await res.json().catch(() => null)) as unknown;
    if (!res.ok) {
      const env = body as Partial<ErrorEnvelope> | null;
      if (env && typeof env.error === 'string' && typeof env.message === 'string') {
        throw new PlinthError(env.error, env.message, env.details);
      }
      throw new UnavailableError(`${base} answered ${res.status}.`);
    }
    return body as T;
  }
}
