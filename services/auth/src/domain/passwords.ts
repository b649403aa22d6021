import bcrypt from 'bcrypt';
import { MAX_PASSWORD_BYTES } from './validation';

/**
 * bcrypt with a configured cost (DESIGN.md §7). `verify` against a null hash (unknown e-mail,
 * password-less user) still spends one comparison on a dummy hash of the same cost, so timing
 * does not tell which e-mails exist.
 */
export class PasswordHasher {
  private readonly dummy: string;

  constructor(private readonly cost: number) {
    this.dummy = bcrypt.hashSync('plinth-dummy-password-never-matches', cost);
  }

  hash(password: string): Promise<string> {
    return bcrypt.hash(password, this.cost);
  }

  /**
   * True when `password` matches `hash`. A password over 72 bytes never matches (bcrypt would
   * compare only its first 72 bytes); it still spends one comparison, like every failure.
   */
  async verify(password: string, hash: string | null): Promise<boolean> {
    const tooLong = Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES;
    const ok = await bcrypt.compare(password, tooLong || hash === null ? this.dummy : hash);
    return ok && hash !== null && !tooLong;
  }
}
