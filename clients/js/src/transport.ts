import { PlinthError, errorFromResponse } from './errors';
import { sendXhr, type XhrConstructor } from './xhr';

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
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Path under `/v1/projects/{project}`, starting with `/`. */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** A body sent as is instead of JSON: `multipart/form-data` (FormData) or raw bytes (Blob). */
  payload?: FormData | Blob;
  /** Upload progress; in browsers the request then goes through XMLHttpRequest (see `xhr.ts`). */
  onProgress?: (progress: { loaded: number; total: number }) => void;
  headers?: Record<string, string>;
  /** Called with the answer's headers before its body is returned (e.g. `idempotent-replayed`). */
  onHeaders?: (header: (name: string) => string | null) => void;
}

import type { RawAnswer } from './raw-answer';

export type { RawAnswer } from './raw-answer';

/** The HTTP layer: one project, one key, JSON in and out, the error envelope turned into `PlinthError`. */
export class Transport {
  readonly url: string;
  readonly project: string;
  readonly key: string;
  private readonly fetchFn: typeof fetch;

  /** What paths are under: `/v1/projects/{project}`, or another base (the operator API's `/v1/admin`). */
  readonly base: string;

  constructor(opts: TransportOptions, base?: string) {
    if (!opts.url || (base === undefined && (!opts.project || !opts.key))) throw new TypeError('Plinth: url, project and key are required.');
    this.url = opts.url.replace(/\/+$/, '');
    this.project = opts.project;
    this.key = opts.key;
    this.base = base ?? `/v1/projects/${encodeURIComponent(opts.project)}`;
    this.fetchFn = opts.fetch ?? ((input, init) => fetch(input, init));
  }

  /** `{url}/v1/projects/{project}{path}` (or `{url}{base}{path}`) */
  endpoint(path: string): string {
    return this.url + this.base + path;
  }

  async request<T>(spec: RequestSpec): Promise<T> {
    let target = this.endpoint(spec.path);
    if (spec.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(spec.query)) if (v !== undefined) q.set(k, String(v));
      const s = q.toString();
      if (s) target += `?${s}`;
    }
    const headers: Record<string, string> = { ...(this.key ? { Authorization: `Bearer ${this.key}` } : {}), ...spec.headers };
    if (spec.body !== undefined && !spec.payload) headers['Content-Type'] = 'application/json';
    spec.signal?.throwIfAborted();
    const payload = spec.payload ?? (spec.body === undefined ? undefined : JSON.stringify(spec.body));
    const XHR = (globalThis as { XMLHttpRequest?: XhrConstructor }).XMLHttpRequest;
    const viaXhr = spec.onProgress !== undefined && XHR !== undefined;
    const answer = viaXhr ? await sendXhr(XHR, spec.method, target, headers, payload, spec) : await this.sendFetch(spec.method, target, headers, payload, spec.signal);
    if (!viaXhr && spec.onProgress && answer.ok) {
      // fetch reports no upload progress: one event once the whole body has been sent.
      const total = payloadSize(spec.payload);
      spec.onProgress({ loaded: total, total });
    }
    spec.onHeaders?.(answer.header);
    const { text, requestId } = answer;
    let body: unknown = undefined;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
    }
    if (!answer.ok) throw errorFromResponse(answer.status, body, requestId, `${spec.method} ${this.base}${spec.path}`);
    if (body === undefined) throw new PlinthError({ status: answer.status, code: 'internal', message: 'Plinth answered with a body that is not JSON.', requestId });
    return body as T;
  }

  private async sendFetch(method: string, target: string, headers: Record<string, string>, payload: string | FormData | Blob | undefined, signal?: AbortSignal): Promise<RawAnswer> {
    let res: Response;
    try {
      res = await this.fetchFn(target, { method, headers, body: payload, signal });
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw new PlinthError({ status: 0, code: 'network_error', message: `Plinth could not be reached (${String((err as Error)?.message ?? err)}).`, cause: err });
    }
    const requestId = res.headers.get('x-request-id');
    try {
      return { status: res.status, ok: res.ok, requestId, text: await res.text(), header: (name) => res.headers.get(name) };
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw new PlinthError({ status: 0, code: 'network_error', message: 'The answer from Plinth was cut off.', requestId, cause: err });
    }
  }
}

/** The bytes of a Blob, or of a FormData's values (without the multipart framing). */
function payloadSize(payload: FormData | Blob | undefined): number {
  if (!payload) return 0;
  if (payload instanceof Blob) return payload.size;
  let n = 0;
  payload.forEach((v) => {
    n += typeof v === 'string' ? new TextEncoder().encode(v).length : v.size;
  });
  return n;
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
