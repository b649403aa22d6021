/**
 * The secrets of a project archive (Auth settings with the providers' client secrets, TOTP
 * secrets, webhooks' signing secrets) are encrypted under the operator's passphrase: a key derived with scrypt (parameters
 * and salt in the archive's header), AES-256-GCM per value with a fresh IV, and what the value
 * is (`auth_settings`, `mfa:<user id>`, `webhook:<id>`) as associated data, so a value moved to another place in
 * the archive does not open. The header carries a sealed check value: a wrong passphrase is
 * refused before anything is imported.
 */
import { createCipheriv, createDecipheriv, randomBytes, scrypt } from 'node:crypto';
import { CliError, UsageError } from '../client';

export interface KdfParams {
  kdf: 'scrypt';
  /** base64url, 16 bytes. */
  salt: string;
  N: number;
  r: number;
  p: number;
}

/** ≈ 100 ms and 32 MiB on a server core: slows a guess without slowing an export. */
const DEFAULTS = { N: 2 ** 15, r: 8, p: 1 };
/** An archive may not ask for more work than this (its header is input). */
const MAX = { N: 2 ** 20, r: 16, p: 4 };
const MIN_PASSPHRASE = 12;
const CHECK = 'plinth-project-archive';

function derive(passphrase: string, params: KdfParams): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(passphrase, Buffer.from(params.salt, 'base64url'), 32, { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r + (1 << 20) }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

export class ArchiveKey {
  private constructor(
    private readonly key: Buffer,
    readonly params: KdfParams,
  ) {}

  /** A new key for an export (a fresh salt). */
  static async create(passphrase: string): Promise<ArchiveKey> {
    if (passphrase.length < MIN_PASSPHRASE) throw new UsageError(`the passphrase must be at least ${MIN_PASSPHRASE} characters`);
    const params: KdfParams = { kdf: 'scrypt', salt: randomBytes(16).toString('base64url'), ...DEFAULTS };
    return new ArchiveKey(await derive(passphrase, params), params);
  }

  /** The key of an archive, checked against its header's check value. */
  static async open(passphrase: string, params: unknown, check: unknown): Promise<ArchiveKey> {
    const p = params as Partial<KdfParams> | null;
    const ok =
      p?.kdf === 'scrypt' &&
      typeof p.salt === 'string' &&
      [p.N, p.r, p.p].every((v) => Number.isSafeInteger(v) && (v as number) >= 1) &&
      (p.N as number) <= MAX.N &&
      ((p.N as number) & ((p.N as number) - 1)) === 0 &&
      (p.r as number) <= MAX.r &&
      (p.p as number) <= MAX.p;
    if (!ok || typeof check !== 'string') throw new CliError('the archive header has no usable encryption parameters: not a Plinth project archive, or damaged');
    const key = new ArchiveKey(await derive(passphrase, p as KdfParams), p as KdfParams);
    if (key.open('check', check) !== CHECK) throw new CliError('wrong passphrase for this archive');
    return key;
  }

  /** The check value the header carries. */
  check(): string {
    return this.seal('check', CHECK);
  }

  seal(what: string, plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(what));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64url');
  }

  /** The plaintext; a CliError when the value was not sealed as `what` with this key (damaged). */
  open(what: string, blob: string): string {
    try {
      const raw = Buffer.from(blob, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(what));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      if (what === 'check') return '';
      throw new CliError(`the archive's encrypted ${what.split(':')[0]} does not open: the archive is damaged`);
    }
  }
}
