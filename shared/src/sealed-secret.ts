import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Secrets a store must read back but nobody holding only the database may (users' and
 * operators' TOTP secrets, webhook signing secrets) are kept sealed: AES-256-GCM under a key
 * derived (HKDF-SHA256) from the deployment's key material — PLINTH_INTERNAL_SECRET unless a
 * dedicated key is configured — and bound to what they belong to (the additional data, e.g.
 * project and user). A sealed value is base64url of IV (12 bytes), tag (16) and ciphertext.
 * Losing the key material makes every sealed value unreadable: it is backed up with the data.
 */
export class SecretSealer {
  private readonly key: Buffer;

  /** `salt` and `info` keep the keys of different uses apart though they derive from one secret. */
  constructor(keyMaterial: string, salt: string, info: string) {
    this.key = Buffer.from(hkdfSync('sha256', keyMaterial, salt, info, 32));
  }

  seal(boundTo: Buffer, secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(boundTo);
    const ct = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64url');
  }

  /** The secret, or null when `blob` was not sealed for `boundTo` with this key (or is no sealed value). */
  open(boundTo: Buffer, blob: string): string | null {
    try {
      const raw = Buffer.from(blob, 'base64url');
      if (raw.length < 28) return null;
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAAD(boundTo);
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
