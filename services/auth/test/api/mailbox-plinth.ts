import request from 'supertest';
import { startTestPlinth, type TestPlinth, type TestProject } from '@plinth/testing/harness';
import { forwardingHandle } from '../forwarding-handle';
import { findSecrets } from './no-secrets';

/** What a test sends through the gateway: path under /v1/projects/<project>. */
export interface MailboxCall {
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  /** Which project key goes in Authorization; default public. */
  key?: 'public' | 'secret';
  body?: object;
  userToken?: string;
  /** The client address, sent as X-Forwarded-For (the composition trusts one proxy hop). */
  ip?: string;
  /** Send the body form-encoded, as an HTML form does (default JSON). */
  form?: boolean;
}

export interface MailboxResult {
  status: number;
  /** As supertest parses it; tests assert on it field by field. */
  body: any;
  /** The raw body (HTML pages). */
  text: string;
  headers: { [name: string]: string };
}

/** A message of the dev mailbox (GET /mailbox). */
export interface MailboxMessage {
  id: string;
  to: string;
  kind: string;
  text: string;
  data: { token?: string; code?: string; new_email?: string };
  created_at: string;
}

/**
 * Auth as `npm start` runs it — the real standalone composition (gateway, auth, mailer with
 * its dev mailbox) — driven over HTTP through the gateway. Mail is read the way a user sees it:
 * from the dev mailbox the mailer delivers to. Records every response body and every password
 * sent, so a suite can check none leaked.
 */
export class MailboxPlinth {
  readonly responses: unknown[] = [];
  readonly passwordsSent = new Set<string>();
  /** Ids of mails already handed to the test: `nextMail` answers only newer ones. */
  private readonly seen = new Set<string>();

  constructor(
    readonly plinth: TestPlinth,
    private project: TestProject,
  ) {}

  /** A fresh project with Auth enabled and `settings` applied; later calls go to it. */
  async useNewProject(settings: object = {}): Promise<string> {
    this.project = await this.plinth.createProject();
    const r = await this.call({ method: 'patch', path: '/settings/auth', key: 'secret', body: { enabled: true, ...settings } });
    if (r.status !== 200) throw new Error(`settings failed: ${r.status} ${JSON.stringify(r.body)}`);
    return this.project.id;
  }

  async call(c: MailboxCall): Promise<MailboxResult> {
    const key = c.key === 'secret' ? this.project.secretKey : this.project.publicKey;
    let req = request(this.plinth.app)
      [c.method](`/v1/projects/${this.project.id}${c.path}`)
      .set('authorization', `Bearer ${key}`)
      .set('x-forwarded-for', c.ip ?? '203.0.113.7');
    if (c.userToken !== undefined) req = req.set('x-auth-user-token', c.userToken);
    const body = c.body as { password?: unknown; current_password?: unknown; new_password?: unknown } | undefined;
    for (const p of [body?.password, body?.current_password, body?.new_password]) if (typeof p === 'string' && p !== '') this.passwordsSent.add(p);
    if (c.form) req = req.type('form');
    const res = c.body === undefined ? await req : await req.send(c.body);
    this.responses.push(res.body);
    return { status: res.status, body: res.body, text: res.text, headers: res.headers as { [name: string]: string } };
  }

  post(path: string, body: object, userToken?: string, ip?: string): Promise<MailboxResult> {
    return this.call({ method: 'post', path, body, userToken, ip });
  }

  /**
   * The oldest mail of `kind` to `to` that no earlier call handed out, waiting (up to 10 s)
   * for the mailer to deliver it.
   */
  async nextMail(to: string, kind: string): Promise<MailboxMessage> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const box = await this.call({ method: 'get', path: `/mailbox?to=${encodeURIComponent(to)}&limit=1000`, key: 'secret' });
      const fresh = (box.body.messages as MailboxMessage[]).filter((m) => m.kind === kind && !this.seen.has(m.id)).reverse();
      if (fresh[0]) {
        this.seen.add(fresh[0].id);
        return fresh[0];
      }
      if (Date.now() > deadline) throw new Error(`no new ${kind} mail to ${to}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** The number of mails of `kind` to `to` in the dev mailbox now. */
  async countMails(to: string, kind: string): Promise<number> {
    const box = await this.call({ method: 'get', path: `/mailbox?to=${encodeURIComponent(to)}&limit=1000`, key: 'secret' });
    return (box.body.messages as MailboxMessage[]).filter((m) => m.kind === kind).length;
  }
}

/** One MailboxPlinth for the calling test file: started before its tests, closed after. */
export function useMailboxPlinth(env: Record<string, string> = {}): MailboxPlinth {
  let running: MailboxPlinth | null = null;
  beforeAll(async () => {
    const plinth = await startTestPlinth({ env: { PLINTH_MAIL_POLL_MS: '20', PLINTH_TRUST_PROXY: '1', ...env } });
    running = new MailboxPlinth(plinth, plinth.project);
  });
  afterAll(async () => {
    await running?.plinth.close();
  });
  return forwardingHandle(() => running, 'the standalone Plinth');
}

/** Registers, as the last test of a file, the scan of every response body for a password or hash. */
export function itLeakedNoPasswords(t: MailboxPlinth): void {
  it('no response body contained a password or a hash of one', () => {
    expect(t.responses.length).toBeGreaterThan(0);
    expect(t.passwordsSent.size).toBeGreaterThan(0);
    expect(findSecrets(t.responses, t.passwordsSent)).toEqual([]);
  });
}
