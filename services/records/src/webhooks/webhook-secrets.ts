import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** A new signing secret in the Standard Webhooks form: `whsec_` + 32 random bytes, base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * Encrypts webhook signing secrets at rest (AES-256-GCM, bound to the project and webhook id),
 * as auth encrypts TOTP secrets: the database alone does not let anyone forge a delivery. The key
 * comes from PLINTH_WEBHOOK_KEY, or from PLINTH_INTERNAL_SECRET when that is unset.
 */
export class WebhookSecrets {
  private readonly key: Buffer;

  constructor(keyMaterial: string) {
    this.key = Buffer.from(hkdfSync('sha256', keyMaterial, 'plinth-records', 'webhook-secret-encryption', 32));
  }

  seal(project: string, webhookId: string, secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(`${project}\n${webhookId}`));
    const ct = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64url');
  }

  /** The secret, or null when the blob was not sealed for this webhook with this key. */
  open(project: string, webhookId: string, blob: string): string | null {
    try {
      const raw = Buffer.from(blob, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(`${project}\n${webhookId}`));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
