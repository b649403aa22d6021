import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PlinthError } from '@plinth/shared';
import { mergeProviders, publicProviders, redirectAllowed } from '../src/domain/oauth-providers';
import { boundedFetch } from '../src/oauth/bounded-fetch';

describe('provider settings', () => {
  it('refuses http issuers and GitHub addresses unless the operator allows http', () => {
    const acme = { acme: { enabled: true, client_id: 'c', client_secret: 's', issuer: 'http://idp.local' } };
    expect(() => mergeProviders({}, acme, false)).toThrow(PlinthError);
    expect(() => mergeProviders({}, acme, false)).toThrow(/https/);
    expect(mergeProviders({}, acme, true).acme?.issuer).toBe('http://idp.local');
    expect(() => mergeProviders({}, { github: { enabled: true, client_id: 'c', client_secret: 's', github_url: 'http://ghe.local' } }, false)).toThrow(/https/);
    expect(mergeProviders({}, { acme: { ...acme.acme, issuer: 'https://idp.example' } }, false).acme?.issuer).toBe('https://idp.example');
  });

  it('keeps the stored secret when a PATCH leaves it out, removes a provider given null, never shows a secret', () => {
    const stored = mergeProviders({}, { google: { enabled: true, client_id: 'c', client_secret: 'shh' } }, false);
    const next = mergeProviders(stored, { google: { enabled: false, client_id: 'c2' } }, false);
    expect(next.google).toEqual({ enabled: false, client_id: 'c2', client_secret: 'shh' });
    expect(publicProviders(next)).toEqual({ google: { enabled: false, client_id: 'c2', client_secret_set: true } });
    expect(mergeProviders(next, { google: null }, false)).toEqual({});
    expect(() => mergeProviders({}, { google: { enabled: true, client_id: 'c' } }, false)).toThrow(/client_secret/);
  });

  it('a redirect target must equal an allowed origin and path; query may differ; fragments, credentials and other schemes are refused', () => {
    const allow = ['https://app.example/signed-in'];
    expect(redirectAllowed('https://app.example/signed-in', allow)).toBe(true);
    expect(redirectAllowed('https://app.example/signed-in?next=%2Fhome', allow)).toBe(true);
    for (const bad of ['https://app.example/signed-in/x', 'https://app.example.evil/signed-in', 'http://app.example/signed-in', 'https://app.example/signed-in#f', 'https://u:p@app.example/signed-in', 'javascript:alert(1)', 'not a url']) {
      expect({ bad, ok: redirectAllowed(bad, allow) }).toEqual({ bad, ok: false });
    }
  });
});

describe('boundedFetch: every provider request is bounded', () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/big') res.end('x'.repeat(5000));
      else if (req.url === '/slow') setTimeout(() => res.end('{}'), 2000);
      else if (req.url === '/redirect') res.writeHead(302, { location: '/big' }).end();
      else res.end('{"ok":true}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const opts = { method: 'GET', headers: {}, body: undefined, redirect: 'manual' as const, signal: undefined };

  it('answers a small body, refuses a body over the limit, ends a slow answer, does not follow redirects', async () => {
    const f = boundedFetch(300, 1000);
    expect(await (await f(`${base}/ok`, opts as never)).json()).toEqual({ ok: true });
    await expect(f(`${base}/big`, opts as never)).rejects.toThrow(/too large/);
    await expect(f(`${base}/slow`, opts as never)).rejects.toThrow();
    expect((await f(`${base}/redirect`, opts as never)).status).toBe(302);
  });
});
