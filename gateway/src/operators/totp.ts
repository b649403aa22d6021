import { Secret, TOTP } from 'otpauth';

/** TOTP as Plinth's user sign-in uses it (docs/auth.md "Two-factor sign-in"): SHA-1, 6 digits, 30 s, ±1 step. */
const PERIOD = 30;
const DIGITS = 6;

export function newOperatorTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

export function operatorTotpUri(secret: string, email: string): string {
  return new TOTP({ issuer: 'Plinth operators', label: email, secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: DIGITS, period: PERIOD }).toString();
}

/** The time step of a right code at `now`, within one step either way; null otherwise. */
export function operatorTotpStep(secret: string, code: string, now: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const totp = { secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: DIGITS, period: PERIOD } as const;
  const delta = TOTP.validate({ ...totp, token: code, timestamp: now, window: 1 });
  return delta === null ? null : TOTP.counter({ period: PERIOD, timestamp: now }) + delta;
}

/** The current code of a secret (what an authenticator app shows); for tests and the doc examples. */
export function operatorTotpCode(secret: string, now = Date.now()): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: DIGITS, period: PERIOD }).generate({ timestamp: now });
}
