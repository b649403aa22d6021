import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { UnavailableError, asProjectId } from '@plinth/shared';
import { createUserTokenVerifier, type Jwk } from '../../src/rules';
import { userTokenSourcesFromConfig } from '../../src/user-tokens';

/**
 * Fault: the auth service (the JWKS behind user tokens) goes down while records serves. Records
 * keeps verifying with the last good keys past their normal age (stale-while-error, bounded,
 * reported), and a records replica that never got keys answers 503, not 401: it cannot tell a
 * forged token from a good one.
 */
describe('user-token verification during an auth outage', () => {
  const PROJECT = 'acme';
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk: Jwk = { ...(publicKey.export({ format: 'jwk' }) as Jwk), kid: 'k1', alg: 'ES256', use: 'sig' };
  let server: http.Server;
  let authUrl: string;
  let fetches = 0;

  const token = () =>
    jwt.sign(
      { aud: PROJECT, sub: 'usr_1', iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 86_400 },
      privateKey,
      { algorithm: 'ES256', keyid: 'k1' },
    );

  /** A stand-in auth service that serves the JWKS over real HTTP until it is stopped. */
  async function startAuth(port = 0): Promise<void> {
    server = http.createServer((_req, res) => {
      fetches += 1;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    authUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  async function stopAuth(): Promise<void> {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }

  beforeEach(() => startAuth());
  afterEach(async () => {
    if (server.listening) await stopAuth();
  });

  function verifierAgainstAuth(clock: { now: number }, failures: Array<{ servingStale: boolean }>) {
    const sources = userTokenSourcesFromConfig({ authUrl, internalSecret: 'x'.repeat(40) });
    return createUserTokenVerifier({
      project: PROJECT,
      jwks: () => sources.jwks(asProjectId(PROJECT)),
      now: () => clock.now,
      maxAgeMs: 600_000,
      maxStaleMs: 3_600_000,
      minRefetchIntervalMs: 30_000,
      onRefreshFailure: (info) => failures.push(info),
    });
  }

  it('serves the last good keys past their age while auth is down, retrying at most once per interval, up to the bound', async () => {
    const clock = { now: Date.now() };
    const failures: Array<{ servingStale: boolean }> = [];
    const verify = verifierAgainstAuth(clock, failures);
    await expect(verify.verify(token())).resolves.toMatchObject({ uid: 'usr_1' });
    await stopAuth();

    clock.now += 601_000; // past maxAge: a refresh is due, and fails
    await expect(verify.verify(token())).resolves.toMatchObject({ uid: 'usr_1' });
    expect(failures).toEqual([expect.objectContaining({ servingStale: true })]);
    // Within the retry interval: no new attempt, still verified.
    await expect(verify.verify(token())).resolves.toMatchObject({ uid: 'usr_1' });
    expect(failures).toHaveLength(1);

    clock.now += 3_000_000; // beyond maxStale (1 h after the last good fetch): fail closed
    await expect(verify.verify(token())).rejects.toBeInstanceOf(UnavailableError);
    expect(failures.at(-1)).toMatchObject({ servingStale: false });
  });

  it('picks fresh keys up again once auth is back', async () => {
    const clock = { now: Date.now() };
    const failures: Array<{ servingStale: boolean }> = [];
    const verify = verifierAgainstAuth(clock, failures);
    await verify.verify(token());
    const port = Number(new URL(authUrl).port);
    await stopAuth();
    clock.now += 601_000;
    await verify.verify(token());
    await startAuth(port);
    const before = fetches;
    clock.now += 31_000; // the next retry is allowed
    await expect(verify.verify(token())).resolves.toMatchObject({ uid: 'usr_1' });
    expect(fetches).toBe(before + 1);
  });

  it('a replica started during the outage (no keys yet) answers 503 unavailable, never 401', async () => {
    await stopAuth();
    const verify = verifierAgainstAuth({ now: Date.now() }, []);
    await expect(verify.verify(token())).rejects.toBeInstanceOf(UnavailableError);
  });
});
