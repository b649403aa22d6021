import { PlinthError, errorFromResponse } from './errors';

/** What every call accepts: an `AbortSignal` cancels it (the promise rejects with the signal's reason). */
export interface CallOptions {
  signal?: AbortSignal;
}

export interface TransportOptions {
  /** The gateway's base URL, e.g. `https://api.example.com` or `http://localhost:8080`. */
  url: string;
  /** The project id (the `demo` of `/v1/projects/demo`). */
  project: string;
  /** A project key: the public key in browsers, a secret key on servers. */
  key: string;
  /** A `fetch` to use instead of the global one (tests, proxies, custom agents). */
  fetch?: typeof fetch;
}

export interface RequestSpec extends CallOptions {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path under `/v1/projects/{project}`, starting with `/`. */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
}

/** The HTTP layer: one project, one key, JSON in and out, the error envelope turned into `PlinthError`. */
export class Transport {
  readonly url: string;
  readonly project: string;
  readonly key: string;
  private readonly fetchFn: typeof fetch;

  constructor(opts: TransportOptions) {
    if (!opts.url || !opts.project || !opts.key) throw new TypeError('Plinth: url, project and key are required.');
    this.url = opts.url.replace(/\/+$/, '');
    this.project = opts.project;
    this.key = opts.key;
    this.fetchFn = opts.fetch ?? ((input, init) => fetch(input, init));
  }

  /** `{url}/v1/projects/{project}{path}` */
  endpoint(path: string): string {
    return `${this.url}/v1/projects/${encodeURIComponent(this.project)}${path}`;
  }

  async request<T>(spec: RequestSpec): Promise<T> {
    let target = this.endpoint(spec.path);
    if (spec.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(spec.query)) if (v !== undefined) q.set(k, String(v));
      const s = q.toString();
      if (s) target += `?${s}`;
    }
    const headers: Record<string, string> = { Authorization: `Bearer ${this.key}`, ...spec.headers };
    if (spec.body !== undefined) headers['Content-Type'] = 'application/json';
    spec.signal?.throwIfAborted();
    let res: Response;
    try {
      res = await this.fetchFn(target, {
        method: spec.method,
        headers,
        body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
        signal: spec.signal,
      });
    } catch (err) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      throw new PlinthError({ status: 0, code: 'network_error', message: `Plinth could not be reached (${String((err as Error)?.message ?? err)}).`, cause: err });
    }
    const requestId = res.headers.get('x-request-id');
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      throw new PlinthError({ status: 0, code: 'network_error', message: 'The answer from Plinth was cut off.', requestId, cause: err });
    }
    let body: unknown = undefined;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
    }
    if (!res.ok) throw errorFromResponse(res.status, body, requestId);
    if (body === undefined) throw new PlinthError({ status: res.status, code: 'internal', message: 'Plinth answered with a body that is not JSON.', requestId });
    return body as T;
  }
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A random UUID (v4), from `crypto.randomUUID`. */
export function uuid(): string {
  return (globalThis as unknown as { crypto: { randomUUID(): string } }).crypto.randomUUID();
}
