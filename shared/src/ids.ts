import { randomBytes, randomFillSync } from 'node:crypto';

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
  takeRandom(bytes, 6, 10);
  return prefix + base32(bytes);
}

/**
 * Random bytes for ids, drawn from one buffer refilled 4 KiB at a time: asking the system's
 * generator for 10 bytes per id cost more than the rest of making it. Ids are not secrets
 * (newSecret draws its own bytes).
 */
const POOL = new Uint8Array(4096);
let poolUsed = POOL.length;

function takeRandom(into: Uint8Array, at: number, n: number): void {
  if (poolUsed + n > POOL.length) {
    randomFillSync(POOL);
    poolUsed = 0;
  }
  into.set(POOL.subarray(poolUsed, poolUsed + n), at);
  poolUsed += n;
}

/** A random secret of `bytes` bytes, base64url, behind `prefix` (`pk_`, `sk_`, `frt_`). */
export function newSecret(prefix: string, bytes = 32): string {
  return prefix + randomBytes(bytes).toString('base64url');
}
