import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import type { Announcements, ProjectId } from '@plinth/shared';
import type { Clock } from '../clock';
import type { SigningKeyRecord, UserStore } from '../store/user-store';

/** The longest any access token lives (minting allows 86 400 s), plus a minute of skew. */
export const MAX_TOKEN_LIFETIME_MS = (86_400 + 60) * 1000;

/** How long a project's keys are cached before the store is read again. */
const CACHE_MS = 30_000;

/** A public key as published in the JWKS. */
export interface PublicJwk {
  kty: string;
  crv: string;
  x: string;
  y: string;
  kid: string;
  use: 'sig';
  alg: 'ES256';
}

function generate(now: number): SigningKeyRecord {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  return {
    kid: randomBytes(12).toString('base64url'),
    private_pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    public_jwk: { kty: String(jwk.kty), crv: String(jwk.crv), x: String(jwk.x), y: String(jwk.y) },
    created_at: now,
    verify_until: null,
  };
}

function verifies(k: SigningKeyRecord, now: number): boolean {
  return k.verify_until === null || k.verify_until > now;
}

/**
 * Per-project ES256 key pairs. The first key is made on first need and stored in the UserStore.
 * `rotate` makes a new signing key; older keys keep verifying until every token they signed has
 * expired, so a rotation never signs anyone out. A rotation and a project deletion are announced
 * on the bus, and every process drops its cached keys of the project when it hears them (the
 * cache's 30 s lifetime bounds staleness when the bus is down).
 */
export class SigningKeys {
  private readonly cache = new Map<ProjectId, { at: number; keys: SigningKeyRecord[] }>();
  private readonly creating = new Map<ProjectId, Promise<SigningKeyRecord>>();
  /** Parsed key objects by kid (parsing a PEM costs about a millisecond; a kid never changes). */
  private readonly parsed = new Map<string, KeyObject>();

  constructor(
    private readonly store: UserStore,
    private readonly clock: Clock,
    private readonly announcements?: Announcements,
  ) {
    announcements?.subscribe((event) => {
      if (event.kind === 'missed') this.cache.clear();
      else this.cache.delete(event.project);
    });
  }

  private async keys(project: ProjectId, fresh = false): Promise<SigningKeyRecord[]> {
    const hit = this.cache.get(project);
    if (hit && !fresh && this.clock() - hit.at < CACHE_MS) return hit.keys;
    const keys = await this.store.listSigningKeys(project);
    this.cache.set(project, { at: this.clock(), keys });
    return keys;
  }

  /** The key new tokens are signed with; created (once per process, even when racing) if the project has none. */
  async current(project: ProjectId): Promise<SigningKeyRecord> {
    // A deletion or rotation another process made drops the cache before anything is signed with
    // it (a re-created project must never get a token signed with its predecessor's key).
    // Verification needs no such care: an unknown kid re-reads the store, and a deleted
    // project's tokens fail the session check.
    this.announcements?.catchUp();
    const active = (await this.keys(project)).find((k) => k.verify_until === null);
    if (active) return active;
    let pending = this.creating.get(project);
    if (!pending) {
      pending = (async () => {
        const again = (await this.keys(project, true)).find((k) => k.verify_until === null);
        if (again) return again;
        const key = generate(this.clock());
        await this.store.addSigningKey(project, key);
        this.cache.delete(project);
        return key;
      })().finally(() => this.creating.delete(project));
      this.creating.set(project, pending);
    }
    return pending;
  }

  /** The key new tokens are signed with, parsed, and its kid. */
  async signer(project: ProjectId): Promise<{ kid: string; key: KeyObject }> {
    const rec = await this.current(project);
    const id = `private:${project}:${rec.kid}`;
    let key = this.parsed.get(id);
    if (!key) this.parsed.set(id, (key = createPrivateKey(rec.private_pem)));
    return { kid: rec.kid, key };
  }

  /** The public key for `kid` if it still verifies; null otherwise. Re-reads the store for an unknown kid. */
  async verificationKey(project: ProjectId, kid: string): Promise<KeyObject | null> {
    let rec = (await this.keys(project)).find((k) => k.kid === kid);
    if (!rec) rec = (await this.keys(project, true)).find((k) => k.kid === kid);
    if (!rec || !verifies(rec, this.clock())) return null;
    const id = `public:${project}:${rec.kid}`;
    let key = this.parsed.get(id);
    if (!key) this.parsed.set(id, (key = createPublicKey({ key: { ...rec.public_jwk }, format: 'jwk' })));
    return key;
  }

  /** Every key that still verifies, for `GET …/auth/jwks.json`. */
  async jwks(project: ProjectId): Promise<{ keys: PublicJwk[] }> {
    await this.current(project);
    const now = this.clock();
    const keys = (await this.keys(project)).filter((k) => verifies(k, now));
    return {
      keys: keys.map((k) => ({
        kty: k.public_jwk.kty ?? 'EC',
        crv: k.public_jwk.crv ?? 'P-256',
        x: k.public_jwk.x ?? '',
        y: k.public_jwk.y ?? '',
        kid: k.kid,
        use: 'sig',
        alg: 'ES256',
      })),
    };
  }

  /** Drops the project's cached keys (the project was purged): the store is read again next time. */
  forget(project: ProjectId): void {
    this.cache.delete(project);
  }

  /**
   * Makes a new signing key; the previous ones verify for MAX_TOKEN_LIFETIME_MS more. Every
   * process signs with the new key once it hears the announcement.
   */
  async rotate(project: ProjectId): Promise<SigningKeyRecord> {
    const now = this.clock();
    const key = generate(now);
    await this.store.addSigningKey(project, key);
    await this.store.retireSigningKeys(project, key.kid, now + MAX_TOKEN_LIFETIME_MS);
    this.cache.delete(project);
    // Not announced (the bus is down): other processes sign with the old key until their cache
    // expires, which still verifies; the rotation itself is done.
    await this.announcements?.publish({ kind: 'signing-keys-changed', project }).catch(() => undefined);
    return key;
  }
}
