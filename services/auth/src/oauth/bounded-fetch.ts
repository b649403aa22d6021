import type { CustomFetch } from 'openid-client';

/** Statuses whose answer has no body (a Response with one cannot be built). */
const NO_BODY = new Set([101, 204, 205, 304]);

/** The bytes of `res`, failing once more than `maxBytes` arrived (the rest is not read). */
async function readBounded(res: Response, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > maxBytes) throw new Error(`provider answer too large (${declared} bytes)`);
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (res.body) {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      total += chunk.byteLength;
      if (total > maxBytes) throw new Error(`provider answer too large (over ${maxBytes} bytes)`);
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks);
}

/**
 * The fetch every request to a provider goes through (discovery, JWKS, token, user info): each
 * request ends after `timeoutMs` and its answer may be at most `maxBytes`; redirects are not
 * followed (docs/auth.md "Limits of provider requests").
 */
export function boundedFetch(timeoutMs: number, maxBytes: number): CustomFetch {
  return async (url, options) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const res = await fetch(url, { method: options.method, headers: options.headers, body: options.body, redirect: 'manual', signal });
    const body = NO_BODY.has(res.status) ? null : await readBounded(res, maxBytes);
    const headers = new Headers(res.headers);
    headers.delete('content-encoding');
    headers.delete('content-length');
    return new Response(body, { status: res.status, statusText: res.statusText, headers });
  };
}
