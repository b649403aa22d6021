import { useAuthTestService } from './auth-test-service';
import { itLeakedNoSecrets } from './no-secrets';

const PASSWORD = 'admin suite password';

describe('Auth API: admin user management (secret key)', () => {
  const t = useAuthTestService();
  let p: string;
  beforeEach(async () => {
    p = await t.enabledProject();
  });

  const admin = (method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: object) =>
    t.call({ method, path: `/auth${path}`, key: 'secret', project: p, body });

  it('POST /users creates a user (201) that can sign in with its password', async () => {
    const r = await admin('post', '/users', { email: 'Ada@example.com', password: PASSWORD, display_name: 'Ada', email_verified: true });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      user: {
        id: expect.stringMatching(/^usr_/),
        email: 'ada@example.com',
        email_verified: true,
        display_name: 'Ada',
        photo_url: null,
        status: 'active',
        has_password: true,
        is_anonymous: false,
        claims: {},
        metadata: {},
        last_sign_in_at: null,
        created_at: expect.any(String),
      },
    });
    const s = await t.call({ method: 'post', path: '/auth/signin', project: p, body: { email: 'ada@example.com', password: PASSWORD } });
    expect(s.status).toBe(200);
    expect(await t.mails(p)).toEqual([]);
  });

  it('POST /users with a taken e-mail answers 409; with a bad body 400 naming the field', async () => {
    await admin('post', '/users', { email: 'ada@example.com' });
    expect((await admin('post', '/users', { email: 'ADA@example.com' })).status).toBe(409);
    const bad = await admin('post', '/users', { email: 'x@example.com', email_verified: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.body.details.fields).toContainEqual({ field: 'email_verified', message: expect.any(String) });
  });

  it('GET /users lists with total, limit and offset, and searches e-mail or display name case-insensitively', async () => {
    for (const [email, name] of [['alice@a.io', 'Alice Smith'], ['bob@smith.org', 'Bob'], ['carol@c.io', null], ['dan@d.io', 'Dan SMITHERS']] as const) {
      await admin('post', '/users', { email, ...(name ? { display_name: name } : {}) });
      t.advance(1000);
    }
    const all = await admin('get', '/users');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total: 4, limit: 50, offset: 0 });
    expect(all.body.users.map((u: { email: string }) => u.email)).toEqual(['alice@a.io', 'bob@smith.org', 'carol@c.io', 'dan@d.io']);
    const page = await admin('get', '/users?limit=2&offset=2');
    expect(page.body).toMatchObject({ total: 4, limit: 2, offset: 2 });
    expect(page.body.users.map((u: { email: string }) => u.email)).toEqual(['carol@c.io', 'dan@d.io']);
    const smith = await admin('get', '/users?search=Smith');
    expect(smith.body.total).toBe(3);
    expect(smith.body.users.map((u: { email: string }) => u.email)).toEqual(['alice@a.io', 'bob@smith.org', 'dan@d.io']);
  });

  it.each([['limit=0'], ['limit=1001'], ['offset=-1'], ['limit=abc']])('GET /users?%s answers 400', async (q) => {
    const r = await admin('get', `/users?${q}`);
    expect(r.status).toBe(400);
    expect(r.body.details.fields[0].field).toBe(q.split('=')[0]);
  });

  it('GET /users/:id answers the user; unknown → 404', async () => {
    const c = await admin('post', '/users', { email: 'ada@example.com' });
    const r = await admin('get', `/users/${c.body.user.id}`);
    expect(r.body).toEqual(c.body);
    const none = await admin('get', '/users/usr_nope');
    expect(none.status).toBe(404);
    expect(none.body.error).toBe('not_found');
  });

  it('PATCH /users/:id changes display_name, photo_url, email_verified and metadata', async () => {
    const c = await admin('post', '/users', { email: 'ada@example.com', display_name: 'Ada' });
    const id = c.body.user.id as string;
    const r = await admin('patch', `/users/${id}`, {
      display_name: 'Ada L.',
      photo_url: 'https://img.example/ada.png',
      email_verified: true,
      metadata: { plan: 'pro', seats: 3, tags: ['a'] },
    });
    expect(r.status).toBe(200);
    expect(r.body.user).toEqual({
      ...c.body.user,
      display_name: 'Ada L.',
      photo_url: 'https://img.example/ada.png',
      email_verified: true,
      metadata: { plan: 'pro', seats: 3, tags: ['a'] },
    });
    const cleared = await admin('patch', `/users/${id}`, { display_name: null, photo_url: null });
    expect(cleared.body.user).toMatchObject({ display_name: null, photo_url: null, email_verified: true });
    expect((await admin('get', `/users/${id}`)).body.user).toEqual(cleared.body.user);
  });

  it.each([
    [{}, 'body'],
    [{ status: 'banned' }, 'status'],
    [{ photo_url: 'ftp://x' }, 'photo_url'],
    [{ metadata: 'nope' }, 'metadata'],
    [{ metadata: { big: 'x'.repeat(17000) } }, 'metadata'],
    // Shapes only MongoDB refuses (or changes) are refused on every store alike.
    [{ metadata: { _bsontype: 'Long', low: 1 } }, 'metadata'],
    [{ metadata: { ref: { $ref: 'users', $id: 'u1' } } }, 'metadata'],
    [{ metadata: { 'a\u0000b': 1 } }, 'metadata'],
    [{ metadata: { deep: JSON.parse('['.repeat(101) + ']'.repeat(101)) } }, 'metadata'],
    [{ email: 'new@example.com' }, 'email'],
  ])('PATCH /users/:id with %j answers 400 naming %s and changes nothing', async (body, field) => {
    const c = await admin('post', '/users', { email: 'ada@example.com' });
    const r = await admin('patch', `/users/${c.body.user.id}`, body);
    expect(r.status).toBe(400);
    // Validation names fields in `details.fields`; a body nested past the chassis' depth limit is
    // refused before validation, naming the path (`metadata.deep`) in `details.field`.
    const named: string[] = r.body.details.fields?.map((f: { field: string }) => f.field) ?? [r.body.details.field];
    expect(named.some((n) => n === field || n.startsWith(`${field}.`))).toBe(true);
    expect((await admin('get', `/users/${c.body.user.id}`)).body).toEqual(c.body);
  });

  it('PATCH of an unknown user answers 404', async () => {
    expect((await admin('patch', '/users/usr_nope', { status: 'disabled' })).status).toBe(404);
  });

  it('DELETE removes the identity and frees the e-mail', async () => {
    const c = await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'ada@example.com', password: PASSWORD } });
    const r = await admin('delete', `/users/${c.body.user.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ deleted: true });
    expect((await admin('get', `/users/${c.body.user.id}`)).status).toBe(404);
    expect((await admin('delete', `/users/${c.body.user.id}`)).status).toBe(404);
    const again = await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'ada@example.com', password: PASSWORD } });
    expect(again.status).toBe(201);
    expect(again.body.user.id).not.toBe(c.body.user.id);
  });

  it('revoke-sessions of an unknown user answers 404', async () => {
    expect((await admin('post', '/users/usr_nope/revoke-sessions')).status).toBe(404);
  });

  it.each([
    ['get', '/users'],
    ['post', '/users'],
    ['get', '/users/usr_x'],
    ['patch', '/users/usr_x'],
    ['delete', '/users/usr_x'],
    ['post', '/users/usr_x/revoke-sessions'],
    ['post', '/users/usr_x/send-reset'],
  ] as const)('%s %s with the public key answers 403 forbidden', async (method, path) => {
    const r = await t.call({ method, path: `/auth${path}`, key: 'public', project: p, body: { email: 'z@example.com' } });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('forbidden');
  });

  itLeakedNoSecrets(t);
});
