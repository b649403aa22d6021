import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { UnauthorizedError, UnavailableError } from '@plinth/shared';
import { createProjectTokenVerifiers, createUserTokenVerifier, type Jwk, type Jwks, type UserTokenVerifierOptions } from '../../src/rules';

const PROJECT = 'acme';

interface TestKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  jwk: Jwk;
}

function makeKey(kid: string): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = { ...(publicKey.export({ format: 'jwk' }) as Jwk), kid, alg: 'ES256', use: 'sig' };
  return { kid, privateKey, publicKey, jwk };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

function mint(key: TestKey, claims: Record<string, unknown> = {}, header: { kid?: string } = {}): string {
  return jwt.sign(
    {
      iss: `plinth/${PROJECT}`,
      aud: PROJECT,
      sub: 'usr_123',
      sid: 'ses_1',
      iat: nowSeconds(),
      exp: nowSeconds() + 900,
      email: 'ada@example.com',
      email_verified: true,
      ...claims,
    },
    key.privateKey,
    { algorithm: 'ES256', keyid: header.kid ?? key.kid },
  );
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A JWKS endpoint stand-in that counts fetches and can change its keys. */
function jwksServer(...keys: TestKey[]) {
  const state = { keys, fetches: 0, failing: false };
  const jwks = async (): Promise<Jwks> => {
    state.fetches += 1;
    if (state.failing) throw new Error('connection refused');
    return { keys: state.keys.map((k) => k.jwk) };
  };
  return { state, jwks };
}

function verifier(server: ReturnType<typeof jwksServer>, extra: Partial<UserTokenVerifierOptions> = {}) {
  return createUserTokenVerifier({ jwks: server.jwks, project: PROJECT, ...extra });
}

async function rejection(p: Promise<unknown>): Promise<UnauthorizedError> {
  await expect(p).rejects.toBeInstanceOf(UnauthorizedError);
  return p.then(
    () => {
      throw new Error('resolved');
    },
    (err: UnauthorizedError) => err,
  );
}

describe('user token verification (X-Db-User-Token)', () => {
  const key = makeKey('key-1');

  it('turns a valid token into AuthInfo, exposing only non-reserved claims', async () => {
    const token = mint(key, { role: 'admin', teams: ['red'] });
    const auth = await verifier(jwksServer(key)).verify(token);
    expect(auth).toEqual({
      uid: 'usr_123',
      email: 'ada@example.com',
      email_verified: true,
      claims: { role: 'admin', teams: ['red'] },
      exp: expect.any(Number),
      // The session and issue time, which a file token asked for with it is bound to.
      sid: 'ses_1',
      iat: expect.any(Number),
    });
    expect(auth.exp).toBeGreaterThan(nowSeconds());
  });

  it('keeps a __proto__ claim as an ordinary claim', async () => {
    // Signed by hand: jsonwebtoken's sign() cannot take such a payload, but a token can carry one.
    const payload = `{"aud":"acme","sub":"usr_1","exp":${nowSeconds() + 900},"__proto__":{"role":"admin"}}`;
    const body = `${b64url({ alg: 'ES256', typ: 'JWT', kid: 'key-1' })}.${Buffer.from(payload).toString('base64url')}`;
    const signature = sign('sha256', Buffer.from(body), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
    const token = `${body}.${signature.toString('base64url')}`;
    const auth = await verifier(jwksServer(key)).verify(token);
    expect(Object.getPrototypeOf(auth.claims)).toBe(Object.prototype);
    expect((auth.claims as { role?: unknown }).role).toBeUndefined();
    expect(Object.keys(auth.claims)).toEqual(['__proto__']);
  });

  it('defaults email to null and email_verified to false for minted tokens without them', async () => {
    const token = mint(key, { email: undefined, email_verified: undefined, sid: undefined });
    const auth = await verifier(jwksServer(key)).verify(token);
    expect(auth).toMatchObject({ uid: 'usr_123', email: null, email_verified: false, claims: {} });
  });

  const refused: Array<[name: string, token: () => string, reason: string]> = [
    [
      'a tampered payload',
      () => {
        const [h, , s] = mint(key).split('.');
        return [h, b64url({ aud: PROJECT, sub: 'usr_admin', exp: nowSeconds() + 900 }), s].join('.');
      },
      'invalid',
    ],
    [
      'a tampered signature',
      () => {
        const [h, p, s] = mint(key).split('.') as [string, string, string];
        const sig = Buffer.from(s, 'base64url');
        sig[10] = (sig[10] ?? 0) ^ 0xff;
        return [h, p, sig.toString('base64url')].join('.');
      },
      'invalid',
    ],
    [
      'alg none',
      () => `${b64url({ alg: 'none', typ: 'JWT', kid: 'key-1' })}.${b64url({ aud: PROJECT, sub: 'usr_1', exp: nowSeconds() + 900 })}.`,
      'algorithm',
    ],
    [
      'HS256 signed with the public key',
      () => {
        const pem = key.publicKey.export({ format: 'pem', type: 'spki' }).toString();
        const body = `${b64url({ alg: 'HS256', typ: 'JWT', kid: 'key-1' })}.${b64url({ aud: PROJECT, sub: 'usr_1', exp: nowSeconds() + 900 })}`;
        return `${body}.${createHmac('sha256', pem).update(body).digest('base64url')}`;
      },
      'algorithm',
    ],
    ['an expired token', () => mint(key, { iat: nowSeconds() - 1000, exp: nowSeconds() - 10 }), 'expired'],
    ["another project's token", () => mint(key, { aud: 'other-project' }), 'audience'],
    ['a token for several audiences', () => mint(key, { aud: [PROJECT, 'other-project'] }), 'audience'],
    ['a token signed by an unknown key', () => mint(makeKey('key-x')), 'unknown_key'],
    ['a token signed by another key under a known kid', () => mint(makeKey('key-1')), 'invalid'],
    ['a token without exp', () => jwt.sign({ aud: PROJECT, sub: 'usr_1' }, key.privateKey, { algorithm: 'ES256', keyid: 'key-1' }), 'invalid'],
    ['a token without sub', () => mint(key, { sub: undefined }), 'invalid'],
    ['garbage', () => 'not-a-jwt', 'malformed'],
    ['an empty header value', () => '', 'malformed'],
  ];

  it.each(refused)('refuses %s with 401', async (_name, token, reason) => {
    const err = await rejection(verifier(jwksServer(key)).verify(token()));
    expect(err.status).toBe(401);
    expect(err.details).toEqual({ header: 'X-Db-User-Token', reason });
  });

  it('refetches the JWKS once for an unknown kid, then rate-limits refetches', async () => {
    const server = jwksServer(key);
    let clock = Date.now();
    const verify = verifier(server, { now: () => clock, minRefetchIntervalMs: 30_000 });
    await verify.verify(mint(key));
    expect(server.state.fetches).toBe(1);

    clock += 60_000;
    const stranger = makeKey('key-x');
    await rejection(verify.verify(mint(stranger)));
    expect(server.state.fetches).toBe(2);

    await rejection(verify.verify(mint(stranger)));
    expect(server.state.fetches).toBe(2);

    clock += 31_000;
    await rejection(verify.verify(mint(stranger)));
    expect(server.state.fetches).toBe(3);
  });

  it('picks up a rotated-in key through the unknown-kid refetch', async () => {
    const server = jwksServer(key);
    const verify = verifier(server, { minRefetchIntervalMs: 0 });
    await verify.verify(mint(key));
    const next = makeKey('key-2');
    server.state.keys = [key, next];
    await expect(verify.verify(mint(next))).resolves.toMatchObject({ uid: 'usr_123' });
    expect(server.state.fetches).toBe(2);
  });

  it('refetches the JWKS after maxAgeMs, so a removed key stops working', async () => {
    const server = jwksServer(key);
    let clock = Date.now();
    const verify = verifier(server, { now: () => clock, maxAgeMs: 60_000 });
    const token = mint(key);
    await verify.verify(token);
    server.state.keys = [];
    await expect(verify.verify(token)).resolves.toMatchObject({ uid: 'usr_123' });
    clock += 61_000;
    await rejection(verify.verify(token));
  });

  it('answers 503 when the JWKS cannot be fetched', async () => {
    const server = jwksServer(key);
    server.state.failing = true;
    await expect(verifier(server).verify(mint(key))).rejects.toBeInstanceOf(UnavailableError);
  });

  it('refuses a token whose session is revoked, asking the hook with project, sid and iat', async () => {
    const calls: Array<[string, string, number]> = [];
    const iat = nowSeconds() - 5;
    const verify = verifier(jwksServer(key), {
      isRevoked: async (project, sid, tokenIat) => {
        calls.push([project, sid, tokenIat]);
        return sid === 'ses_revoked';
      },
    });
    const err = await rejection(verify.verify(mint(key, { sid: 'ses_revoked', iat })));
    expect(err.details).toEqual({ header: 'X-Db-User-Token', reason: 'revoked' });
    await expect(verify.verify(mint(key, { sid: 'ses_live', iat }))).resolves.toMatchObject({ uid: 'usr_123' });
    expect(calls).toEqual([
      [PROJECT, 'ses_revoked', iat],
      [PROJECT, 'ses_live', iat],
    ]);
  });

  it('skips keys it cannot use (other curves, other algorithms) without failing the others', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' }) as Jwk;
    const jwks = async (): Promise<Jwks> => ({ keys: [{ ...rsa, kid: 'rsa-1' }, { ...key.jwk, kid: 'hs', alg: 'HS256' }, key.jwk] });
    const verify = createUserTokenVerifier({ jwks, project: PROJECT });
    await expect(verify.verify(mint(key))).resolves.toMatchObject({ uid: 'usr_123' });
    await rejection(verify.verify(mint(key, {}, { kid: 'hs' })));
  });
});

describe('per-project verifiers', () => {
  it('verifies each project against its own keys and audience, fetching each JWKS once', async () => {
    const keys = { acme: makeKey('acme-1'), globex: makeKey('globex-1') };
    const fetched: string[] = [];
    const verifiers = createProjectTokenVerifiers({
      jwks: async (project) => {
        fetched.push(project);
        return { keys: [keys[project as keyof typeof keys].jwk] };
      },
      minRefetchIntervalMs: 60_000,
    });
    const acmeToken = mint(keys.acme);
    await expect(verifiers.verify('acme', acmeToken)).resolves.toMatchObject({ uid: 'usr_123' });
    await expect(verifiers.verify('acme', acmeToken)).resolves.toMatchObject({ uid: 'usr_123' });
    // acme's token presented to globex: signed by a key globex does not have
    await expect(verifiers.verify('globex', acmeToken)).rejects.toMatchObject({ status: 401 });
    // signed by globex's key but issued for acme
    await expect(verifiers.verify('globex', mint(keys.globex))).rejects.toMatchObject({
      details: { header: 'X-Db-User-Token', reason: 'audience' },
    });
    await expect(verifiers.verify('globex', mint(keys.globex, { aud: 'globex' }))).resolves.toMatchObject({ uid: 'usr_123' });
    expect(fetched).toEqual(['acme', 'globex']);
  });
});
