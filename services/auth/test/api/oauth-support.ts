import { TestGitHub } from '../../../../test/oauth/support/github-server';
import { TestOpenIdProvider } from '../../../../test/oauth/support/openid-provider';
import { loginAtProvider } from '../../../../test/oauth/support/provider-login';
import type { AuthTestService, CallResult } from './auth-test-service';

/** The gateway address the service is told it is reached at; callbacks are read from it, never fetched. */
export const PUBLIC_URL = 'http://plinth.test';
export const APP = 'http://app.test/after-sign-in';
export const OAUTH_ENV = { PLINTH_PUBLIC_URL: PUBLIC_URL, PLINTH_OAUTH_ALLOW_HTTP: 'true' };

export interface Providers {
  op: TestOpenIdProvider;
  github: TestGitHub;
}

/** The real OpenID provider and the GitHub stand-in, for the calling test file. */
export function useProviders(): Providers {
  const running: Partial<Providers> = {};
  beforeAll(async () => {
    running.op = await TestOpenIdProvider.start();
    running.github = await TestGitHub.start();
  }, 30_000);
  afterAll(async () => {
    await running.op?.close();
    await running.github?.close();
  });
  return {
    get op() {
      return running.op as TestOpenIdProvider;
    },
    get github() {
      return running.github as TestGitHub;
    },
  };
}

/** A project with Auth on, the app's address allowed, an OpenID provider `test-op` and `github` configured. */
export async function oauthProject(t: AuthTestService, p: Providers): Promise<string> {
  const project = await t.newProject();
  const callback = `${PUBLIC_URL}/v1/projects/${project}/auth/oauth/callback`;
  await p.op.registerClient({ client_id: `plinth-${project}`, client_secret: `secret-${project}`, redirect_uris: [callback] });
  p.github.registerClient(`gh-${project}`, `gh-secret-${project}`);
  await t.configure(project, {
    redirect_urls: [APP],
    providers: {
      'test-op': { enabled: true, client_id: `plinth-${project}`, client_secret: `secret-${project}`, issuer: p.op.issuer },
      github: { enabled: true, client_id: `gh-${project}`, client_secret: `gh-secret-${project}`, github_url: p.github.webUrl, github_api_url: p.github.apiUrl },
    },
  } as never);
  return project;
}

/** A browser's sign-in start: the provider URL it is sent to and its binding cookie. */
export interface Started {
  status: number;
  body: CallResult['body'];
  location: string;
  cookie: string;
}

export async function start(t: AuthTestService, project: string, provider: string, redirectTo = APP, extra = ''): Promise<Started> {
  const r = await t.call({ method: 'get', project, key: 'none', path: `/auth/oauth/${provider}/start?redirect_to=${encodeURIComponent(redirectTo)}${extra}` });
  const setCookie = r.headers['set-cookie'] as unknown as string[] | undefined;
  return { status: r.status, body: r.body, location: r.headers.location ?? '', cookie: (setCookie?.[0] ?? '').split(';')[0] ?? '' };
}

/** Plinth's callback as the browser reaches it (the address the provider sent it to), with a cookie. */
export async function callback(t: AuthTestService, project: string, at: URL, cookie: string): Promise<{ status: number; body: CallResult['body']; location: URL | null }> {
  const path = at.pathname.replace(`/v1/projects/${project}`, '') + at.search;
  const r = await t.call({ method: 'get', project, key: 'none', path, headers: cookie ? { cookie } : {} });
  return { status: r.status, body: r.body, location: r.headers.location ? new URL(r.headers.location) : null };
}

/** start → provider login page → callback: where the browser ends up at the app. */
export async function signInThrough(t: AuthTestService, project: string, provider: string, login: string): Promise<URL> {
  const s = await start(t, project, provider);
  if (s.status !== 302) throw new Error(`start answered ${s.status} ${JSON.stringify(s.body)}`);
  const back = await callback(t, project, await loginAtProvider(s.location, login), s.cookie);
  if (!back.location) throw new Error(`callback answered ${back.status} ${JSON.stringify(back.body)}`);
  return back.location;
}

export function exchange(t: AuthTestService, project: string, code: string): Promise<CallResult> {
  return t.call({ method: 'post', project, path: '/auth/oauth/exchange', body: { code } });
}
