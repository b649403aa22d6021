import { createPublicKey } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { useAuthTestService } from './auth-test-service';
import { itLeakedNoSecrets } from './no-secrets';

const PASSWORD = 'tokens suite password';

interface Jwk {
  kid: string;
  kty: string;
  crv: string;
  x: string;
  y: string;
  alg: string;
  use: string;
}

describe('Auth API: minting, JWKS and signing-key rotation', () => {
  const t = useAuthTestService();

  const mint = (project: string, body: object, key: 'secret' | 'public' = 'secret') =>
    t.call({ method: 'post', path: '/auth/tokens', key, project, body });
  const jwks = async (project: string): Promise<Jwk[]> => {
    const r = await t.call({ method: 'get', path: '/auth/jwks.json', key: 'none', project });
    expect(r.status).toBe(200);
    return r.body.keys as Jwk[];
  };
  /** Verifies a token the way another service would: with the published JWKS only. */
  async function verifyWithJwks(project: string, token: string): Promise<jwt.JwtPayload> {
    const kid = jwt.decode(token, { complete: true })?.header.kid;
    const jwk = (await jwks(project)).find((k) => k.kid === kid);
    if (!jwk) throw new Error(`kid ${kid} is not in the JWKS`);
    const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, format: 'jwk' });
    return jwt.verify(token, key, { algorithms: ['ES256'], audience: project, issuer: 'plinth', clockTimestamp: Math.floor(t.now / 1000) }) as jwt.JwtPayload;
  }

  it('mints a token for an outside user, default 3600 s, verifiable with the JWKS — with Auth disabled', async () => {
    const p = await t.newProject();
    const r = await mint(p, { user_id: 'ext-42', claims: { role: 'editor', teams: ['a', 'b'] } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_at: new Date((Math.floor(t.now / 1000) + 3600) * 1000).toISOString(),
      expires_in: 3600,
    });
    const claims = await verifyWithJwks(p, r.body.access_token);
    expect(claims).toEqual({
      iss: 'plinth',
      aud: p,
      sub: 'ext-42',
      iat: Math.floor(t.now / 1000),
      exp: Math.floor(t.now / 1000) + 3600,
      role: 'editor',
      teams: ['a', 'b'],
      // Recorded in the session store, so POST /auth/tokens/revoke can end it (docs/auth.md).
      sid: expect.stringMatching(/^mnt_/),
    });
  });

  it('honours expires_in within 60–86400', async () => {
    const p = await t.newProject();
    expect((await mint(p, { user_id: 'u', expires_in: 60 })).body.expires_in).toBe(60);
    expect((await mint(p, { user_id: 'u', expires_in: 86_400 })).body.expires_in).toBe(86_400);
  });

  it.each([
    [{}, 'user_id'],
    [{ user_id: '' }, 'user_id'],
    [{ user_id: 'x'.repeat(129) }, 'user_id'],
    [{ user_id: 'u', expires_in: 59 }, 'expires_in'],
    [{ user_id: 'u', expires_in: 86_401 }, 'expires_in'],
    [{ user_id: 'u', expires_in: '600' }, 'expires_in'],
    [{ user_id: 'u', claims: { sub: 'admin' } }, 'claims'],
    [{ user_id: 'u', claims: { email_verified: true } }, 'claims'],
    [{ user_id: 'u', claims: { blob: 'x'.repeat(1000) } }, 'claims'],
    [{ user_id: 'u', claims: ['a'] }, 'claims'],
  ])('minting with %j answers 400 naming %s', async (body, field) => {
    const r = await mint((await t.newProject()), body);
    expect(r.status).toBe(400);
    expect(r.body.details.fields.map((f: { field: string }) => f.field)).toContain(field);
  });

  it('minting with the public key answers 403; without a key 401', async () => {
    const p = await t.newProject();
    const r = await mint(p, { user_id: 'u' }, 'public');
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('forbidden');
    expect((await t.call({ method: 'post', path: '/auth/tokens', key: 'none', project: p, body: { user_id: 'u' } })).status).toBe(401);
  });

  it('JWKS publishes one ES256 key per project, with no private parts', async () => {
    const a = await jwks(await t.newProject());
    const b = await jwks(await t.newProject());
    expect(a).toEqual([{ kid: expect.any(String), kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), alg: 'ES256', use: 'sig' }]);
    expect(a[0]?.kid).not.toBe(b[0]?.kid);
    expect(await jwks(await t.newProject())).not.toEqual(a);
  });

  it('a token of one project does not verify for another', async () => {
    const p = await t.newProject();
    const q = await t.newProject();
    const r = await mint(p, { user_id: 'u' });
    await expect(verifyWithJwks(q, r.body.access_token)).rejects.toThrow();
  });

  it('rotation signs new tokens with a new key and keeps old tokens valid until they expire', async () => {
    const p = await t.enabledProject();
    const s = await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'ada@example.com', password: PASSWORD } });
    const oldKid = jwt.decode(s.body.access_token, { complete: true })?.header.kid;
    const rot = await t.call({ method: 'post', path: '/auth/keys/rotate', key: 'secret', project: p });
    expect(rot.status).toBe(200);
    expect(rot.body).toEqual({ rotated: true, kid: expect.any(String) });
    expect(rot.body.kid).not.toBe(oldKid);
    expect((await jwks(p)).map((k) => k.kid).sort()).toEqual([oldKid, rot.body.kid].sort());

    const fresh = await mint(p, { user_id: 'u' });
    expect(jwt.decode(fresh.body.access_token, { complete: true })?.header.kid).toBe(rot.body.kid);
    expect((await t.call({ method: 'get', path: '/auth/user', project: p, userToken: s.body.access_token })).status).toBe(200);
    await expect(verifyWithJwks(p, s.body.access_token)).resolves.toMatchObject({ sub: s.body.user.id });

    t.advance((86_400 + 61) * 1000);
    expect((await jwks(p)).map((k) => k.kid)).toEqual([rot.body.kid]);
  });

  it('rotation needs the secret key', async () => {
    const r = await t.call({ method: 'post', path: '/auth/keys/rotate', key: 'public', project: (await t.newProject()) });
    expect(r.status).toBe(403);
  });

  itLeakedNoSecrets(t);
});
