import bcrypt from 'bcrypt';

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

  async verify(password: string, hash: string | null): Promise<boolean> {
    const ok = await bcrypt.compare(password, hash ?? this.dummy);
    return ok && hash !== null;
  }
}
