/** A real standalone Plinth for the SDK's suites: Auth on, a few helpers a test needs. */
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { TEST_WEBHOOK_ENV } from '@plinth/testing/webhook-receiver';
import { createClient, type PlinthClient } from '../src';
import { createAdminClient, type AdminClient } from '../src/admin';

export interface SdkFixture {
  t: TestPlinth;
  url: string;
  project: string;
  pk: string;
  sk: string;
  admin: AdminClient;
  /** A client of the project with its public key (`opts` added); `close()` closes it. */
  client(opts?: Partial<Parameters<typeof createClient>[0]>): PlinthClient;
  /** Waits for the newest mail of `kind` to `to` in the dev mailbox and returns its data. */
  mail(to: string, kind: 'verify' | 'reset' | 'otp' | 'email-change' | 'email-changed'): Promise<{ token?: string; code?: string }>;
  /** Closes the clients made with `client()`, then stops Plinth. */
  close(): Promise<void>;
}

export async function startSdkFixture(authSettings: Record<string, unknown> = {}): Promise<SdkFixture> {
  const t = await startTestPlinth({
    env: {
      PLINTH_MAIL_POLL_MS: '20',
      // Webhook receivers of the suites listen on 127.0.0.2; a failing delivery is dead after 3 quick attempts.
      ...TEST_WEBHOOK_ENV,
      PLINTH_WEBHOOK_RETRY_WINDOW_MS: '60',
    },
  });
  const url = await t.url();
  const project = t.project.id;
  const admin = createAdminClient({ url, project, secretKey: t.project.secretKey });
  await admin.authSettings.update({ enabled: true, ...authSettings });
  const seen = new Set<string>();
  const clients: PlinthClient[] = [];
  return {
    t,
    url,
    project,
    pk: t.project.publicKey,
    sk: t.project.secretKey,
    admin,
    client(opts = {}) {
      const c = createClient({ url, project, key: t.project.publicKey, ...opts });
      clients.push(c);
      return c;
    },
    async mail(to, kind) {
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        const res = await fetch(`${url}/v1/projects/${project}/mailbox?to=${encodeURIComponent(to)}`, {
          headers: { authorization: `Bearer ${t.project.secretKey}` },
        });
        const box = (await res.json()) as { messages: Array<{ id: string; kind: string; data: { token?: string; code?: string } }> };
        const m = box.messages.filter((x) => x.kind === kind && !seen.has(x.id)).pop();
        if (m) {
          seen.add(m.id);
          return m.data;
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`no ${kind} mail to ${to}`);
    },
    close: async () => {
      for (const c of clients) c.close();
      await t.close();
    },
  };
}
