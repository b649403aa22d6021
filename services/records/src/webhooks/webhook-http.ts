import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { urlHost, type TargetPolicy } from './webhook-target';

/** How a name is resolved (dns.lookup's signature); tests may pass their own. */
export type Resolver = (hostname: string, options: LookupOptions, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

const systemResolver: Resolver = (hostname, options, callback) => dns.lookup(hostname, { ...options, all: true }, callback);

export interface SendOptions {
  policy: TargetPolicy;
  /** Whole request, connect to last byte read (default 10 s). */
  timeoutMs: number;
  /** Bytes of the response body read at most; the rest is not read (default 64 kB). */
  maxResponseBytes: number;
  resolver?: Resolver;
}

/** What the receiver answered. */
export interface SendResult {
  status: number;
}

/** A delivery that could not be made or was refused before any byte was sent. */
export class DeliveryError extends Error {}

/**
 * A `lookup` for the http agent that resolves the name and refuses the connection when any
 * address it resolves to is not allowed: the check happens at connect time, on the addresses the
 * socket will use, so a name that resolves inward (DNS rebinding included) is refused.
 */
function guardedLookup(policy: TargetPolicy, resolver: Resolver): LookupFunction {
  return ((hostname: string, options: LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
    resolver(hostname, options, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const refused = addresses.find((a) => !policy.allowsAddress(a.address));
      if (refused || addresses.length === 0) {
        const e: NodeJS.ErrnoException = new DeliveryError(`${hostname} resolves to ${refused?.address ?? 'nothing'}, an address webhooks may not reach`);
        e.code = 'EWEBHOOKTARGET';
        return callback(e, '', 0);
      }
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  }) as LookupFunction;
}

/**
 * POSTs `body` to `url` once: no redirect followed (a 3xx is an answer like any other), at most
 * `timeoutMs` in all, at most `maxResponseBytes` of the answer read. Resolves with the status;
 * rejects with DeliveryError when the target is refused, or with the network error.
 */
export function sendWebhook(rawUrl: string, headers: Record<string, string>, body: string, opts: SendOptions): Promise<SendResult> {
  const url = new URL(rawUrl);
  const host = urlHost(url);
  const allowedAsWritten = opts.policy.allowsHost(host);
  // A literal address is never looked up: check it here.
  if (!allowedAsWritten && isIP(host) !== 0 && !opts.policy.allowsAddress(host)) {
    return Promise.reject(new DeliveryError(`${host} is an address webhooks may not reach`));
  }
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | null, result?: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(result!);
    };
    const req = transport.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'Plinth-Webhooks/1' },
      agent: false,
      ...(allowedAsWritten ? {} : { lookup: guardedLookup(opts.policy, opts.resolver ?? systemResolver) }),
    });
    const timer = setTimeout(() => {
      req.destroy(new DeliveryError(`no answer within ${opts.timeoutMs} ms`));
    }, opts.timeoutMs);
    req.on('error', (err) => finish(err));
    req.on('response', (res) => {
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        // Enough of the answer: the status is what counts.
        if (read >= opts.maxResponseBytes) {
          res.destroy();
          finish(null, { status: res.statusCode ?? 0 });
        }
      });
      res.on('end', () => finish(null, { status: res.statusCode ?? 0 }));
      res.on('error', (err) => finish(err));
      res.on('close', () => finish(null, { status: res.statusCode ?? 0 }));
    });
    req.end(body);
  });
}
