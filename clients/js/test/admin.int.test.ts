import { createClient } from '../src';
import { createAdminClient, PlinthError } from '../src/admin';
import { startSdkFixture, type SdkFixture } from './fixture';

/** `@plinth/client/admin` (secret key) against a real standalone Plinth. */
describe('@plinth/client/admin', () => {
  let f: SdkFixture;
  beforeAll(async () => {
    f = await startSdkFixture({ send_verification_on_signup: false });
  });
  afterAll(async () => {
    await f.close();
  });

  it('Auth settings: read and change', async () => {
    expect(await f.admin.authSettings.get()).toMatchObject({ enabled: true, send_verification_on_signup: false });
    expect(await f.admin.authSettings.update({ access_token_ttl: 120 })).toMatchObject({ access_token_ttl: 120 });
    await expect(f.admin.authSettings.update({ access_token_ttl: 5 })).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
  });

  it('users: create, list, get, update (disable ends sessions), revoke sessions, send a reset, delete', async () => {
    const u = await f.admin.users.create({ email: 'admin-made@example.com', password: 'initial password', email_verified: true });
    expect(u).toMatchObject({ id: expect.stringMatching(/^usr_/), email: 'admin-made@example.com', email_verified: true });
    await expect(f.admin.users.create({ email: 'admin-made@example.com' })).rejects.toMatchObject({ status: 409 });
    expect(await f.admin.users.list({ search: 'admin-made' })).toMatchObject({ total: 1, users: [{ id: u.id }] });
    expect((await f.admin.users.get(u.id)).email).toBe('admin-made@example.com');

    const app = createClient({ url: f.url, project: f.project, key: f.pk });
    await app.auth.signIn('admin-made@example.com', 'initial password');
    await f.admin.users.revokeSessions(u.id);
    await expect(app.auth.user()).rejects.toMatchObject({ status: 401 });
    await app.auth.signIn('admin-made@example.com', 'initial password');
    expect(await f.admin.users.update(u.id, { status: 'disabled', display_name: 'Made' })).toMatchObject({ status: 'disabled', display_name: 'Made' });
    await expect(app.auth.user()).rejects.toMatchObject({ status: 401 });
    await f.admin.users.update(u.id, { status: 'active' });
    await f.admin.users.sendPasswordReset(u.id);
    expect((await f.mail('admin-made@example.com', 'reset')).token).toEqual(expect.any(String));
    await f.admin.users.delete(u.id);
    await expect(f.admin.users.get(u.id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    app.close();
  });

  it('collections: create, list, get, update, delete', async () => {
    const c = await f.admin.collections.create({ name: 'admin_things', fields: { title: { type: 'text', required: true } }, rules: { read: 'auth != null' } });
    expect(c).toMatchObject({ name: 'admin_things', revision: 1, fields: { title: { type: 'text', required: true, unique: false, indexed: false } } });
    await expect(f.admin.collections.create({ name: 'admin_things', fields: {} })).rejects.toMatchObject({ status: 409, code: 'conflict' });
    expect((await f.admin.collections.list()).map((x) => x.name)).toContain('admin_things');
    expect((await f.admin.collections.update('admin_things', { fields: { n: { type: 'integer' } } })).revision).toBe(2);
    expect((await f.admin.collections.get('admin_things')).fields.n?.type).toBe('integer');
    await f.admin.collections.delete('admin_things');
    await expect(f.admin.collections.get('admin_things')).rejects.toMatchObject({ status: 404 });
  });

  it('a public key in place of the secret key is refused with 403', async () => {
    const wrong = createAdminClient({ url: f.url, project: f.project, secretKey: f.pk });
    const err = await wrong.users.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlinthError);
    expect(err).toMatchObject({ status: 403, code: 'forbidden' });
    await expect(wrong.mintToken('u1')).rejects.toMatchObject({ status: 403 });
  });
});
