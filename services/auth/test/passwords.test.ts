import bcrypt from 'bcrypt';
import { PasswordHasher } from '../src/domain/passwords';

describe('PasswordHasher', () => {
  const hasher = new PasswordHasher(4, { concurrency: 2, maxQueued: 8, maxWaitMs: 5000 });
  const who = { project: 'p', caller: 'ip:203.0.113.7' };

  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('hashes with bcrypt at the configured cost and verifies only the right password', async () => {
    const hash = await hasher.hash('correct horse battery', who);
    expect(hash).toMatch(/^\$2[aby]\$04\$/);
    expect(hash).not.toContain('correct horse battery');
    expect(await hasher.verify('correct horse battery', hash, who)).toBe(true);
    expect(await hasher.verify('wrong horse battery', hash, who)).toBe(false);
  });

  it('without a hash (unknown e-mail, password-less user) still spends one comparison, and refuses', async () => {
    const compare = jest.spyOn(bcrypt, 'compare');
    expect(await hasher.verify('plinth-dummy-password-never-matches', null, who)).toBe(false);
    expect(compare).toHaveBeenCalledTimes(1);
    expect(compare.mock.calls[0]?.[1]).toMatch(/^\$2[aby]\$04\$/);
  });
});
