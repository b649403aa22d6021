import bcrypt from 'bcrypt';
import { PasswordHasher } from '../src/domain/passwords';

describe('PasswordHasher', () => {
  const hasher = new PasswordHasher(4);

  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('hashes with bcrypt at the configured cost and verifies only the right password', async () => {
    const hash = await hasher.hash('correct horse battery');
    expect(hash).toMatch(/^\$2[aby]\$04\$/);
    expect(hash).not.toContain('correct horse battery');
    expect(await hasher.verify('correct horse battery', hash)).toBe(true);
    expect(await hasher.verify('wrong horse battery', hash)).toBe(false);
  });

  it('without a hash (unknown e-mail, password-less user) still spends one comparison, and refuses', async () => {
    const compare = jest.spyOn(bcrypt, 'compare');
    expect(await hasher.verify('plinth-dummy-password-never-matches', null)).toBe(false);
    expect(compare).toHaveBeenCalledTimes(1);
    expect(compare.mock.calls[0]?.[1]).toMatch(/^\$2[aby]\$04\$/);
  });
});
