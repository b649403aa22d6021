import { freePort } from '@plinth/testing/free-port';
import { TestGitHub } from '../oauth/support/github-server';
import { TestOpenIdProvider } from '../oauth/support/openid-provider';

/**
 * The sign-in providers docs/auth.md uses: a real OpenID provider (oidc-provider) and the GitHub
 * stand-in, with a client registered for the demo project's callback on a server whose address
 * (PORT, PLINTH_PUBLIC_URL) is chosen here; http issuers allowed (PLINTH_OAUTH_ALLOW_HTTP).
 */
export async function providersForDocs(): Promise<{
  /** The server's address as the providers know it: the doc's $PLINTH (cookies are per host name). */
  publicUrl: string;
  serverEnv: { [name: string]: string };
  docEnv: () => Promise<{ [name: string]: string }>;
  close: () => Promise<void>;
}> {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const op = await TestOpenIdProvider.start();
  const github = await TestGitHub.start();
  github.registerClient('docs-github-client', 'docs-github-secret');
  github.users.set('octocat', { id: 583231, login: 'octocat', name: 'The Octocat', emails: [{ email: 'octocat@example.com', primary: true, verified: true }] });
  return {
    publicUrl,
    serverEnv: { PORT: String(port), PLINTH_PUBLIC_URL: publicUrl, PLINTH_OAUTH_ALLOW_HTTP: 'true' },
    docEnv: async () => {
      await op.registerClient({ client_id: 'docs-client', client_secret: 'docs-secret', redirect_uris: [`${publicUrl}/v1/projects/demo/auth/oauth/callback`] });
      return {
        OIDC_ISSUER: op.issuer,
        OIDC_CLIENT_ID: 'docs-client',
        OIDC_CLIENT_SECRET: 'docs-secret',
        GITHUB_URL: github.webUrl,
        GITHUB_API_URL: github.apiUrl,
        GITHUB_CLIENT_ID: 'docs-github-client',
        GITHUB_CLIENT_SECRET: 'docs-github-secret',
      };
    },
    close: async () => {
      await op.close();
      await github.close();
    },
  };
}
