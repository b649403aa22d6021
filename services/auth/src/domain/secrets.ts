import { createCipheriv, createDecipheriv, createHash, randomBytes, randomInt } from 'node:crypto';
import { newSecret } from '@plinth/shared';

/** sha256, hex: how refresh tokens, link tokens and OTP codes are stored. */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** A refresh token: `frt_` + 256 random bits. */
export function newRefreshToken(): string {
  return newSecret('frt_', 32);
}

/** A verification or reset link token: 256 random bits, base64url. */
export function newLinkToken(): string {
  return newSecret('', 32);
}

/** A 6-digit one-time code, uniformly random. */
export function newOtpCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

/** How an OTP code is stored: bound to the e-mail so equal codes of two people hash apart. */
export function otpHash(email: string, code: string): string {
  return sha256(`otp\n${email.toLowerCase()}\n${code}`);
}

function graceKey(presentedToken: string): Buffer {
  return createHash('sha256').update(`plinth-refresh-grace\n${presentedToken}`).digest();
}

/**
 * Encrypts the new refresh token under a key derived from the token it replaces (AES-256-GCM).
 * Stored for the 10-second reuse window: only a client holding the old token can recover the
 * new one, and nothing at rest reveals it.
 */
export function sealGrace(nextToken: string, presentedToken: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', graceKey(presentedToken), iv);
  const ct = Buffer.concat([cipher.update(nextToken, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64url');
}

/** The token sealed by sealGrace, or null when the blob was not sealed for this token. */
export function openGrace(blob: string, presentedToken: string): string | null {
  try {
    const raw = Buffer.from(blob, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', graceKey(presentedToken), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
