import { createHash, randomInt } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { newSecret, SecretSealer } from '@plinth/shared';
import { sha256 } from './secrets';

/**
 * TOTP (RFC 6238) as Plinth uses it: SHA-1, 6 digits, 30-second steps, and a code of the step
 * before or after also accepted (clock drift). Authenticator apps read these from the
 * `otpauth://` URI (docs/auth.md "Two-factor sign-in").
 */
const PERIOD = 30;
const DIGITS = 6;
const WINDOW = 1;

/** Recovery codes handed out with a confirmed factor: ten, each single use. */
export const RECOVERY_CODE_COUNT = 10;

/** A new TOTP secret: 160 random bits, base32 (what the URI carries). */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The `otpauth://totp/…` URI an authenticator app scans (as a QR code) or imports. */
export function totpUri(secret: string, issuer: string, label: string): string {
  return new TOTP({ issuer, label, secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: DIGITS, period: PERIOD }).toString();
}

/**
 * The time step a code belongs to when it is right for `secret` at `now` (epoch ms), within one
 * step either way; null otherwise. The caller refuses a step already used (replay).
 */
export function totpStep(secret: string, code: string, now: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = TOTP.validate({ token: code, secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: DIGITS, period: PERIOD, timestamp: now, window: WINDOW });
  return delta === null ? null : TOTP.counter({ period: PERIOD, timestamp: now }) + delta;
}

/** Ten recovery codes, `xxxxx-xxxxx` of base32 letters and digits (50 random bits each). */
export function newRecoveryCodes(): string[] {
  const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789';
  const part = () => Array.from({ length: 5 }, () => alphabet[randomInt(0, alphabet.length)]).join('');
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => `${part()}-${part()}`);
}

/** How a recovery code is stored: sha256 bound to the user (the code has 50 random bits; never stored in clear). */
export function recoveryCodeHash(userId: string, code: string): string {
  return sha256(`mfa-recovery\n${userId}\n${code.trim().toLowerCase()}`);
}

/** A sign-in challenge: `mfc_` + 256 random bits; stored as sha256 (challengeHash). */
export function newChallenge(): string {
  return newSecret('mfc_', 32);
}

export function challengeHash(challenge: string): string {
  return sha256(`mfa-challenge\n${challenge}`);
}

/**
 * Encrypts TOTP secrets at rest (AES-256-GCM, bound to the project and user; SecretSealer): the
 * database alone does not give anyone a user's second factor. The key comes from PLINTH_MFA_KEY,
 * or from PLINTH_INTERNAL_SECRET when that is unset (docs/auth.md "Configuration").
 */
export class FactorSecrets {
  private readonly sealer: SecretSealer;

  constructor(keyMaterial: string) {
    this.sealer = new SecretSealer(keyMaterial, 'plinth-auth', 'totp-secret-encryption');
  }

  seal(project: string, userId: string, secret: string): string {
    return this.sealer.seal(this.aad(project, userId), secret);
  }

  /** The secret, or null when the blob was not sealed for this user with this key. */
  open(project: string, userId: string, blob: string): string | null {
    return this.sealer.open(this.aad(project, userId), blob);
  }

  private aad(project: string, userId: string): Buffer {
    return createHash('sha256').update(`${project}\n${userId}`).digest();
  }
}
