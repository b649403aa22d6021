/**
 * Requests through `XMLHttpRequest`, used only when an upload asks for progress in a browser:
 * `fetch` has no upload progress events, XHR's `upload.onprogress` does.
 */
import { PlinthError } from './errors';
import type { RawAnswer } from './raw-answer';

/** The part of the DOM's XMLHttpRequest this uses (the SDK does not depend on DOM types). */
interface XhrLike {
  open(method: string, url: string): void;
  setRequestHeader(name: string, value: string): void;
  send(body?: unknown): void;
  abort(): void;
  getResponseHeader(name: string): string | null;
  readonly status: number;
  readonly responseText: string;
  readonly upload: { onprogress: ((e: { loaded: number; total: number; lengthComputable: boolean }) => void) | null };
  onload: (() => void) | null;
  onerror: (() => void) | null;
  onabort: (() => void) | null;
}
export type XhrConstructor = new () => XhrLike;

export function sendXhr(
  XHR: XhrConstructor,
  method: string,
  target: string,
  headers: Record<string, string>,
  payload: unknown,
  opts: { signal?: AbortSignal; onProgress?: (p: { loaded: number; total: number }) => void },
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const xhr = new XHR();
    const signal = opts.signal;
    const onAbort = () => xhr.abort();
    const done = () => signal?.removeEventListener('abort', onAbort);
    xhr.open(method, target);
    for (const [k, v] of Object.entries(headers)) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) opts.onProgress?.({ loaded: e.loaded, total: e.total });
    };
    xhr.onload = () => {
      done();
      resolve({ status: xhr.status, ok: xhr.status >= 200 && xhr.status < 300, requestId: xhr.getResponseHeader('x-request-id'), text: xhr.responseText, header: (name) => xhr.getResponseHeader(name) });
    };
    xhr.onerror = () => {
      done();
      reject(new PlinthError({ status: 0, code: 'network_error', message: 'Plinth could not be reached (the upload failed).' }));
    };
    xhr.onabort = () => {
      done();
      reject(signal?.reason ?? new PlinthError({ status: 0, code: 'network_error', message: 'The upload was aborted.' }));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    xhr.send(payload);
  });
}
