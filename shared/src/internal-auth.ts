import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Gateway → service credential (DESIGN.md §4). The gateway forwards who is calling in plain
 * headers and signs them with PLINTH_INTERNAL_SECRET, so a service can trust the headers and a
 * captured credential cannot be replayed for another project, key kind or request.
 */
export const INTERNAL_HEADERS = {
  credential: 'x-plinth-internal',
  project: 'x-plinth-project',
  keyKind: 'x-plinth-key-kind',
  requestId: 'x-request-id',
} as const;

/** What the caller presented at the gateway: a public or secret project key, or nothing (JWKS). */
export type KeyKind = 'public' | 'secret' | 'none';

export interface InternalIdentity {
  project: string;
  keyKind: KeyKind;
  requestId: string;
}

/** How long a signed credential stays valid, allowing for clock skew between pods. */
const MAX_SKEW_SECONDS = 300;

function mac(secret: string, ts: string, id: InternalIdentity): string {
  return createHmac('sha256', secret)
    .update(`${ts}\n${id.project}\n${id.keyKind}\n${id.requestId}`)
    .digest('base64url');
}

/** Returns the value of the `x-plinth-internal` header for this identity. */
export function signInternal(secret: string, id: InternalIdentity, nowMs = Date.now()): string {
  const ts = String(Math.floor(nowMs / 1000));
  return `v1.${ts}.${mac(secret, ts, id)}`;
}

/** True when `credential` was made by signInternal with the same secret and identity, recently. */
export function verifyInternal(
  secret: string,
  credential: string | undefined,
  id: InternalIdentity,
  nowMs = Date.now(),
): boolean {
  if (!credential) return false;
  const parts = credential.split('.');
  if (parts.length !== 3 || parts[0] !== 'v1') return false;
  const [, ts, given] = parts as [string, string, string];
  const t = Number(ts);
  if (!Number.isInteger(t) || Math.abs(nowMs / 1000 - t) > MAX_SKEW_SECONDS) return false;
  const expected = Buffer.from(mac(secret, ts, id));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

export function isKeyKind(v: unknown): v is KeyKind {
  return v === 'public' || v === 'secret' || v === 'none';
}

/**
 * Requests handed to a service by the gateway's in-process transport (standalone mode): they never
 * left this process, so the service trusts their identity headers without the HMAC. Only code in
 * this process can add a request here; nothing arriving over the network can.
 */
const inProcessRequests = new WeakSet<object>();

export function markInProcess(req: object): void {
  inProcessRequests.add(req);
}

export function isInProcess(req: object): boolean {
  return inProcessRequests.has(req);
}
