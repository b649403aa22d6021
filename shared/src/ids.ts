import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += CROCKFORD[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += CROCKFORD[(value << (5 - bits)) & 31];
  return out;
}

/**
 * A time-ordered, URL-safe id: 48 bits of milliseconds then 80 random bits (ULID layout),
 * lower-case Crockford base32, behind `prefix` (`rec_`, `usr_`, …). Ids made later sort later
 * (within a millisecond, order is random).
 */
export function newId(prefix: string, nowMs = Date.now()): string {
  const bytes = new Uint8Array(16);
  let t = nowMs;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  bytes.set(randomBytes(10), 6);
  return prefix + base32(bytes);
}

/** A random secret of `bytes` bytes, base64url, behind `prefix` (`pk_`, `sk_`, `frt_`). */
export function newSecret(prefix: string, bytes = 32): string {
  return prefix + randomBytes(bytes).toString('base64url');
}
