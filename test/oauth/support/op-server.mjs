/**
 * A real OpenID provider for the tests: `oidc-provider` (a certified implementation) on a free
 * port of 127.0.0.1, started as a child process by test/oauth/support/openid-provider.ts.
 * Prints `READY <issuer>` once listening. Test-only control endpoints under /__test:
 * - POST /__test/client  {client_id, client_secret, redirect_uris}: registers a client;
 * - POST /__test/account {sub, email, email_verified}: an account the login form accepts;
 * - POST /__test/tamper  {mode: "aud"|"iss"|"nonce"|"exp"|null}: the next ID tokens the token
 *   endpoint answers are re-signed with the provider's own key and that claim made wrong.
 * The login page (/interaction/:uid) is a plain form: the account id, "Sign in".
 */
import http from 'node:http';
import Provider from 'oidc-provider';
import * as jose from 'jose';

const store = new Map();
class MemoryAdapter {
  constructor(name) {
    this.name = name;
  }
  key(id) {
    return `${this.name}:${id}`;
  }
  async upsert(id, payload) {
    store.set(this.key(id), payload);
    if (payload.grantId) store.set(`grant:${payload.grantId}:${this.key(id)}`, id);
    if (payload.uid) store.set(`uid:${payload.uid}`, id);
    if (payload.userCode) store.set(`userCode:${payload.userCode}`, id);
  }
  async find(id) {
    return store.get(this.key(id));
  }
  async findByUid(uid) {
    const id = store.get(`uid:${uid}`);
    return id ? this.find(id) : undefined;
  }
  async findByUserCode(code) {
    const id = store.get(`userCode:${code}`);
    return id ? this.find(id) : undefined;
  }
  async consume(id) {
    const p = store.get(this.key(id));
    if (p) p.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id) {
    store.delete(this.key(id));
  }
  async revokeByGrantId(grantId) {
    for (const k of [...store.keys()]) if (k.startsWith(`grant:${grantId}:`)) store.delete(k.slice(`grant:${grantId}:`.length));
  }
}

const accounts = new Map();
let tamper = null;
const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
const jwk = { ...(await jose.exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };

const server = http.createServer();
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  adapter: MemoryAdapter,
  jwks: { keys: [jwk] },
  cookies: { keys: ['test-cookie-key-0123456789abcdef'] },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: false } },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: async (_ctx, id) => {
    const a = accounts.get(id) ?? { sub: id, email: id.includes('@') ? id : `${id}@example.com`, email_verified: true };
    return { accountId: id, claims: async () => ({ sub: a.sub, email: a.email, email_verified: a.email_verified, name: `User ${a.sub}` }) };
  },
});

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

async function tampered(body) {
  const answer = JSON.parse(body);
  if (!answer.id_token) return body;
  const claims = jose.decodeJwt(answer.id_token);
  const now = Math.floor(Date.now() / 1000);
  if (tamper === 'aud') claims.aud = 'some-other-client';
  if (tamper === 'iss') claims.iss = 'http://127.0.0.1:1/not-the-issuer';
  if (tamper === 'nonce') claims.nonce = 'not-the-nonce';
  if (tamper === 'exp') Object.assign(claims, { iat: now - 7200, exp: now - 3600 });
  answer.id_token = await new jose.SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'test-key' }).sign(privateKey);
  return JSON.stringify(answer);
}

const callback = provider.callback();
server.on('request', async (req, res) => {
  try {
    const url = new URL(req.url, issuer);
    if (req.method === 'POST' && url.pathname.startsWith('/__test/')) {
      const body = JSON.parse(await readBody(req));
      if (url.pathname === '/__test/client') {
        await new MemoryAdapter('Client').upsert(body.client_id, {
          client_id: body.client_id,
          client_secret: body.client_secret,
          redirect_uris: body.redirect_uris,
          token_endpoint_auth_method: 'client_secret_post',
          grant_types: ['authorization_code'],
          response_types: ['code'],
        });
      } else if (url.pathname === '/__test/account') accounts.set(body.sub, body);
      else if (url.pathname === '/__test/tamper') tamper = body.mode ?? null;
      res.writeHead(204).end();
      return;
    }
    const m = /^\/interaction\/([^/]+)(\/login)?$/.exec(url.pathname);
    if (m) {
      const details = await provider.interactionDetails(req, res);
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
          `<!doctype html><title>Test provider sign-in</title><h1>Sign in to the test provider</h1>
           <form method="post" action="/interaction/${details.uid}/login"><label>Account <input name="login" autofocus></label>
           <button type="submit">Sign in</button></form>`,
        );
        return;
      }
      const login = new URLSearchParams(await readBody(req)).get('login') ?? '';
      const grant = new provider.Grant({ accountId: login, clientId: details.params.client_id });
      grant.addOIDCScope(String(details.params.scope));
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { login: { accountId: login }, consent: { grantId } }, { mergeWithLastSubmission: false });
      return;
    }
    if (tamper && req.method === 'POST' && url.pathname === '/token') {
      const write = res.write.bind(res);
      const end = res.end.bind(res);
      const chunks = [];
      res.write = (c) => (chunks.push(Buffer.from(c)), true);
      res.end = (c) => {
        if (c) chunks.push(Buffer.from(c));
        tampered(Buffer.concat(chunks).toString('utf8')).then((body) => {
          res.removeHeader('content-length');
          res.setHeader('content-length', Buffer.byteLength(body));
          write(body);
          end();
        });
        return res;
      };
    }
    callback(req, res);
  } catch (err) {
    res.writeHead(500).end(String(err));
  }
});

process.stdout.write(`READY ${issuer}\n`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
