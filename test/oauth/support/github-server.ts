import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A GitHub user of the stand-in, with the addresses `/user/emails` lists. */
export interface GitHubUser {
  id: number;
  login: string;
  name: string;
  emails: Array<{ email: string; primary: boolean; verified: boolean }>;
}

const readBody = async (req: http.IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/**
 * GitHub's documented OAuth endpoints on a local port: `GET /login/oauth/authorize` (a sign-in
 * form), `POST /login/oauth/access_token` (client secret, code, PKCE verifier checked),
 * `GET /api/user` and `GET /api/user/emails` (Bearer token). `webUrl` and `apiUrl` are what a
 * project's `github` provider is given as `github_url` and `github_api_url`.
 */
export class TestGitHub {
  readonly users = new Map<string, GitHubUser>();
  private readonly codes = new Map<string, { login: string; client_id: string; redirect_uri: string; challenge: string }>();
  private readonly tokens = new Map<string, string>();
  private readonly clients = new Map<string, string>();

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<TestGitHub> {
    const server = http.createServer();
    const gh = new TestGitHub(server);
    server.on('request', (req, res) => {
      gh.handle(req, res).catch((err: unknown) => res.writeHead(500).end(String(err)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return gh;
  }

  get webUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get apiUrl(): string {
    return `${this.webUrl}/api`;
  }

  registerClient(clientId: string, secret: string): void {
    this.clients.set(clientId, secret);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.webUrl);
    const json = (status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const q = url.searchParams;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
        `<!doctype html><title>Sign in to GitHub</title><h1>Sign in to the GitHub stand-in</h1>
         <form method="post" action="/login/oauth/authorize"><input name="login" autofocus>
         ${['client_id', 'redirect_uri', 'state', 'code_challenge'].map((n) => `<input type="hidden" name="${n}" value="${q.get(n) ?? ''}">`).join('')}
         <button type="submit">Sign in</button></form>`,
      );
      return;
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/authorize') {
      const f = new URLSearchParams(await readBody(req));
      const code = randomBytes(10).toString('hex');
      this.codes.set(code, { login: f.get('login') ?? '', client_id: f.get('client_id') ?? '', redirect_uri: f.get('redirect_uri') ?? '', challenge: f.get('code_challenge') ?? '' });
      const back = new URL(f.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      back.searchParams.set('state', f.get('state') ?? '');
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const f = new URLSearchParams(await readBody(req));
      const grant = this.codes.get(f.get('code') ?? '');
      this.codes.delete(f.get('code') ?? '');
      const verifier = f.get('code_verifier') ?? '';
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const clientId = f.get('client_id') ?? '';
      // GitHub answers errors with status 200 and an `error` member.
      if (!grant || this.clients.get(clientId) !== f.get('client_secret') || grant.client_id !== clientId || grant.challenge !== challenge || grant.redirect_uri !== f.get('redirect_uri')) {
        json(200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
        return;
      }
      const token = `gho_${randomBytes(16).toString('hex')}`;
      this.tokens.set(token, grant.login);
      json(200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
      return;
    }
    const login = this.tokens.get((req.headers.authorization ?? '').replace(/^(Bearer|token) /i, ''));
    const user = login ? this.users.get(login) : undefined;
    if (url.pathname === '/api/user' || url.pathname === '/api/user/emails') {
      if (!user) json(401, { message: 'Bad credentials' });
      else if (url.pathname === '/api/user') json(200, { id: user.id, login: user.login, name: user.name, avatar_url: null, email: null });
      else json(200, user.emails.map((e) => ({ ...e, visibility: 'private' })));
      return;
    }
    json(404, { message: 'Not Found' });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}
