import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Gateway → service credential (docs/api-conventions.md "Credentials"). The gateway forwards who is calling in plain
 * headers and signs them with PLINTH_INTERNAL_SECRET, together with the request's method, path
 * (with its query string), a SHA-256 of its body and a random nonce. A service accepts a
 * credential once: a captured header cannot be replayed, nor reused for another project, key
 * kind, operation or body.
 *
 * Credential format: `v3.<unix seconds>.<nonce>.<body sha256, base64url>.<hmac, base64url>`.
 */
export const INTERNAL_HEADERS = {
  credential: 'x-plinth-internal',
  project: 'x-plinth-project',
  keyKind: 'x-plinth-key-kind',
  requestId: 'x-request-id',
  /** The id of the project key the caller presented (`key_…`); rate limits of the secret key are per key. */
  keyId: 'x-plinth-key-id',
  /** The client's address as the gateway trusts it (PLINTH_TRUST_PROXY); anonymous rate limits and
   * the realtime service's per-address connection quota are per address. */
  clientAddress: 'x-plinth-client-address',
} as const;

/** What the caller presented at the gateway: a public or secret project key, or nothing (JWKS). */
export type KeyKind = 'public' | 'secret' | 'none';

export interface InternalIdentity {
  project: string;
  keyKind: KeyKind;
  requestId: string;
  /** The project key's id; absent on service → service calls. */
  keyId?: string;
  /** The client's address; absent on service → service calls. */
  clientAddress?: string;
}

/** The operation a credential is bound to. `path` is the URL path with its query string. */
export interface InternalOperation {
  method: string;
  path: string;
}

/**
 * How long a signed credential stays valid, allowing for clock skew between pods. A service
 * remembers every nonce it accepted for this long (twice, both sides of its clock).
 */
export const INTERNAL_CREDENTIAL_WINDOW_SECONDS = 60;

/** base64url SHA-256 of a request body (an absent body hashes as the empty one). */
export function bodyDigest(body: Buffer | string | undefined): string {
  return createHash('sha256').update(body ?? '').digest('base64url');
}

export const EMPTY_BODY_DIGEST = bodyDigest('');

function mac(secret: string, ts: string, nonce: string, digest: string, id: InternalIdentity, op: InternalOperation): string {
  return createHmac('sha256', secret)
    .update(
      `v3\n${ts}\n${nonce}\n${op.method.toUpperCase()}\n${op.path}\n${digest}\n${id.project}\n${id.keyKind}\n${id.requestId}\n` +
        `${id.keyId ?? ''}\n${id.clientAddress ?? ''}`,
    )
    .digest('base64url');
}

/** Returns the value of the `x-plinth-internal` header for this identity, operation and body digest. */
export function signInternal(
  secret: string,
  id: InternalIdentity,
  op: InternalOperation,
  digest: string = EMPTY_BODY_DIGEST,
  nowMs = Date.now(),
): string {
  const ts = String(Math.floor(nowMs / 1000));
  const nonce = randomBytes(16).toString('base64url');
  return `v3.${ts}.${nonce}.${digest}.${mac(secret, ts, nonce, digest, id, op)}`;
}

/** What a verified credential says: its nonce (to refuse a second use), body digest and time. */
export interface VerifiedCredential {
  nonce: string;
  /** The body digest it was signed for; the service must check the body it reads against it. */
  digest: string;
  /** Unix seconds it was made at. */
  ts: number;
}

const B64URL = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * The credential's contents when it was made by signInternal with the same secret, identity
 * and operation, recently; null otherwise. Does not check the body or the nonce's freshness.
 */
export function verifyInternal(
  secret: string,
  credential: string | undefined,
  id: InternalIdentity,
  op: InternalOperation,
  nowMs = Date.now(),
): VerifiedCredential | null {
  if (!credential) return null;
  const parts = credential.split('.');
  if (parts.length !== 5 || parts[0] !== 'v3') return null;
  const [, ts, nonce, digest, given] = parts as [string, string, string, string, string];
  const t = Number(ts);
  if (!Number.isInteger(t) || Math.abs(nowMs / 1000 - t) > INTERNAL_CREDENTIAL_WINDOW_SECONDS) return null;
  if (!B64URL.test(nonce) || !B64URL.test(digest)) return null;
  const expected = Buffer.from(mac(secret, ts, nonce, digest, id, op));
  const actual = Buffer.from(given);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return null;
  return { nonce, digest, ts: t };
}

/** The identity headers plus the credential, for a caller that signs its own request (service → service, tests). */
export function internalHeaders(
  secret: string,
  id: InternalIdentity,
  op: InternalOperation,
  body?: Buffer | string,
): Record<string, string> {
  return {
    [INTERNAL_HEADERS.project]: id.project,
    [INTERNAL_HEADERS.keyKind]: id.keyKind,
    [INTERNAL_HEADERS.requestId]: id.requestId,
    ...(id.keyId === undefined ? {} : { [INTERNAL_HEADERS.keyId]: id.keyId }),
    ...(id.clientAddress === undefined ? {} : { [INTERNAL_HEADERS.clientAddress]: id.clientAddress }),
    [INTERNAL_HEADERS.credential]: signInternal(secret, id, op, bodyDigest(body)),
  };
}

/** What the optional identity headers may hold: a key id, an IPv4 or IPv6 address. */
const OPTIONAL_IDENTITY = /^[A-Za-z0-9_.:%-]{1,100}$/;

/**
 * The optional identity headers of a request (key id, client address), or null when one is there
 * but malformed. They are signed with the rest, so only the gateway sets them.
 */
export function optionalIdentity(headers: Record<string, string | string[] | undefined>): Pick<InternalIdentity, 'keyId' | 'clientAddress'> | null {
  const keyId = headers[INTERNAL_HEADERS.keyId];
  const clientAddress = headers[INTERNAL_HEADERS.clientAddress];
  const ok = (v: unknown) => v === undefined || (typeof v === 'string' && OPTIONAL_IDENTITY.test(v));
  if (!ok(keyId) || !ok(clientAddress)) return null;
  return { keyId: keyId as string | undefined, clientAddress: clientAddress as string | undefined };
}

/**
 * While the shared nonce store (Redis) cannot answer, a replica accepts only credentials made at
 * most this many seconds ago (either side of its clock), each once (its own ReplayGuard). A
 * credential captured on the network could then be replayed once on each other replica, within
 * this window only, instead of for the whole INTERNAL_CREDENTIAL_WINDOW_SECONDS.
 */
export const LOCAL_FALLBACK_WINDOW_SECONDS = 5;

/** True when `credential` may be accepted on this replica's own nonce cache (the shared store is away). */
export function withinFallbackWindow(credential: VerifiedCredential, nowMs = Date.now()): boolean {
  return Math.abs(nowMs / 1000 - credential.ts) <= LOCAL_FALLBACK_WINDOW_SECONDS;
}

/** Epoch ms after which `credential` is refused anyway (its nonce need not be kept longer). */
export function credentialExpiry(credential: VerifiedCredential): number {
  return (credential.ts + INTERNAL_CREDENTIAL_WINDOW_SECONDS + 1) * 1000;
}

/**
 * Nonces of the credentials this process accepted, kept until their credential expires. A
 * nonce is accepted once. Memory: one entry per request of the last two minutes.
 */
export class ReplayGuard {
  private readonly seen = new Map<string, number>();

  constructor(private readonly nowMs: () => number = Date.now) {}

  /** True (and remembered) the first time; false when `credential`'s nonce was seen before. */
  accept(credential: VerifiedCredential): boolean {
    const now = this.nowMs();
    this.prune(now);
    if (this.seen.has(credential.nonce)) return false;
    this.seen.set(credential.nonce, credentialExpiry(credential));
    return true;
  }

  private prune(now: number): void {
    // Entries arrive roughly in time order: drop from the oldest until one is still live.
    for (const [nonce, expires] of this.seen) {
      if (expires > now) break;
      this.seen.delete(nonce);
    }
  }
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
