import { UnauthorizedError } from '@plinth/shared';
import { accessContextFor, type ProjectTokenVerifiers } from '../../src/rules';
import { user } from './fixtures';

const seen: Array<[string, string]> = [];
const verifiers: ProjectTokenVerifiers = {
  async verify(project, token) {
    seen.push([project, token]);
    if (token !== 'good') throw new UnauthorizedError('The user token is invalid.');
    return user('usr_1');
  },
};
const now = new Date('2026-06-01T00:00:00.000Z');

describe('accessContextFor', () => {
  beforeEach(() => seen.splice(0));

  it('is anonymous without the header, and verifies nothing', async () => {
    await expect(accessContextFor({ project: 'acme', keyKind: 'public', userToken: undefined, verifiers, now })).resolves.toEqual({
      keyKind: 'public',
      auth: null,
      now,
    });
    expect(seen).toEqual([]);
  });

  it('carries the verified user for the request project', async () => {
    const ctx = await accessContextFor({ project: 'acme', keyKind: 'public', userToken: ' good ', verifiers, now });
    expect(ctx.auth?.uid).toBe('usr_1');
    expect(seen).toEqual([['acme', 'good']]);
  });

  it('answers 401 for a present but invalid token instead of treating the caller as anonymous', async () => {
    await expect(accessContextFor({ project: 'acme', keyKind: 'public', userToken: 'forged', verifiers })).rejects.toMatchObject({
      status: 401,
    });
    await expect(accessContextFor({ project: 'acme', keyKind: 'public', userToken: '', verifiers })).rejects.toMatchObject({
      status: 401,
    });
  });
});
