import { randomBytes } from 'node:crypto';
import { SecretSealer } from '@plinth/shared';

/** A new signing secret in the Standard Webhooks form: `whsec_` + 32 random bytes, base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * Encrypts webhook signing secrets at rest (AES-256-GCM, bound to the project and webhook id;
 * SecretSealer), as auth encrypts TOTP secrets: the database alone does not let anyone forge a
 * delivery. The key comes from PLINTH_WEBHOOK_KEY, or from PLINTH_INTERNAL_SECRET when that is unset.
 */
export class WebhookSecrets {
  private readonly sealer: SecretSealer;

  constructor(keyMaterial: string) {
    this.sealer = new SecretSealer(keyMaterial, 'plinth-records', 'webhook-secret-encryption');
  }

  seal(project: string, webhookId: string, secret: string): string {
    return this.sealer.seal(Buffer.from(`${project}\n${webhookId}`), secret);
  }

  /** The secret, or null when the blob was not sealed for this webhook with this key. */
  open(project: string, webhookId: string, blob: string): string | null {
    return this.sealer.open(Buffer.from(`${project}\n${webhookId}`), blob);
  }
}
