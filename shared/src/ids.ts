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

/** The millisecond of the last id made in this process, and its 80 random bits. */
let lastMs = -1;
const lastRandom = new Uint8Array(10);

/** Adds one to `bytes`, read as one big-endian number. */
function increment(bytes: Uint8Array): void {
  for (let i = bytes.length - 1; i >= 0; i--) {
    bytes[i] = (bytes[i]! + 1) & 255;
    if (bytes[i] !== 0) return;
  }
}

/**
 * A time-ordered, URL-safe id: 48 bits of milliseconds then 80 random bits (ULID layout),
 * lower-case Crockford base32, behind `prefix` (`rec_`, `usr_`, …). Ids made later sort later,
 * and within one millisecond the ids one process makes sort in the order it made them: the
 * random bits of the first are drawn, each following one adds one to them (ULID's monotonic
 * ids, like Firebase's push ids), so two events of one write path — a user created, then
 * deleted — never swap places however fast they come.
 */
export function newId(prefix: string, nowMs = Date.now()): string {
  const bytes = new Uint8Array(16);
  let t = nowMs;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  if (nowMs === lastMs) increment(lastRandom);
  else {
    lastMs = nowMs;
    takeRandom(lastRandom, 0, 10);
  }
  bytes.set(lastRandom, 6);
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
