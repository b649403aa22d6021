import { UnauthorizedError } from '@plinth/shared';
import { authFromUserToken, type ProjectTokenVerifiers } from '../../src/rules';
import { user } from './fixtures';

const seen: Array<[string, string]> = [];
const verifiers: ProjectTokenVerifiers = {
  async verify(project, token) {
    seen.push([project, token]);
    if (token !== 'good') throw new UnauthorizedError('The user token is invalid.');
    return user('usr_1');
  },
  forget() {},
  forgetAll() {},
};
describe('authFromUserToken', () => {
  beforeEach(() => seen.splice(0));

  it('is anonymous without the header, and verifies nothing', async () => {
    await expect(authFromUserToken({ project: 'acme', userToken: undefined, verifiers })).resolves.toBeNull();
    expect(seen).toEqual([]);
  });

  it('carries the verified user for the request project', async () => {
    const auth = await authFromUserToken({ project: 'acme', userToken: [' good ', 'ignored'], verifiers });
    expect(auth?.uid).toBe('usr_1');
    expect(seen).toEqual([['acme', 'good']]);
  });

  it('answers 401 for a present but invalid token instead of treating the caller as anonymous', async () => {
    await expect(authFromUserToken({ project: 'acme', userToken: 'forged', verifiers })).rejects.toMatchObject({
      status: 401,
    });
    await expect(authFromUserToken({ project: 'acme', userToken: '', verifiers })).rejects.toMatchObject({
      status: 401,
    });
  });
});
