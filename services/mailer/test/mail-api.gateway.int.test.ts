import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createMailQueueFromConfig, type MailJob, type MailQueue } from '@plinth/shared';
import { testMailJob } from '@plinth/shared/testing/mail-job';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

/**
 * The mailer's API through the real gateway in standalone mode: embedded outbox, dev mailbox.
 * Jobs are enqueued through a second outbox instance on the same file, as auth's would be.
 */
describe('mail API through the gateway (standalone)', () => {
  let t: TestPlinth;
  let templatesDir: string;
  let producer: MailQueue;

  const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

  const job = (overrides: Partial<MailJob> = {}): MailJob => testMailJob({ project: t.project.id, ...overrides });

  beforeAll(async () => {
    templatesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-gw-templates-'));
    t = await startTestPlinth({
      env: {
        PLINTH_MAIL_ATTEMPTS: '2',
        PLINTH_MAIL_BACKOFF_MS: '10',
        PLINTH_MAIL_POLL_MS: '10',
        PLINTH_MAIL_TEMPLATES_DIR: templatesDir,
      },
    });
    producer = createMailQueueFromConfig({
      PLINTH_DATA_DIR: t.dataDir,
      PLINTH_MAIL_ATTEMPTS: 2,
      PLINTH_MAIL_BACKOFF_MS: 10,
      PLINTH_MAIL_POLL_MS: 10,
    });
  });

  afterAll(async () => {
    await producer.close();
    await t.close();
    fs.rmSync(templatesDir, { recursive: true, force: true });
  });

  it('shows delivered mail in the dev mailbox, to the secret key only', async () => {
    const mail = job({ to: 'mailbox-user@example.com' });
    await producer.enqueue(mail);
    const mailbox = `/v1/projects/${t.project.id}/mailbox?to=mailbox-user%40example.com`;
    const res = await waitFor('the message', async () => {
      const r = await request(t.app).get(mailbox).set(bearer(t.project.secretKey)).expect(200);
      return r.body.messages.length ? r : undefined;
    });
    expect(res.body.messages).toEqual([
      expect.objectContaining({ id: mail.id, to: 'mailbox-user@example.com', kind: 'verify', data: mail.data }),
    ]);
    expect(res.body.messages[0].text).toContain(`?token=${(mail.data as { token: string }).token}`);

    const other = await t.createProject();
    const cases: [string, Record<string, string>, number, string][] = [
      ['no key', {}, 401, 'unauthorized'],
      ['public key', bearer(t.project.publicKey), 403, 'forbidden'],
      ["another project's secret key", bearer(other.secretKey), 401, 'unauthorized'],
    ];
    for (const [, headers, status, error] of cases) {
      const refused = await request(t.app).get(mailbox).set(headers).expect(status);
      expect(refused.body).toMatchObject({ error });
    }
  });

  it('dead-letters a job whose template cannot be read, and delivers it on retry once fixed', async () => {
    // A directory where a template file should be: every render fails until it is removed.
    const broken = path.join(templatesDir, t.project.id, 'reset.subject');
    fs.mkdirSync(broken, { recursive: true });
    const mail = job({ kind: 'reset', to: 'dead-letter@example.com' });
    await producer.enqueue(mail);
    const failedPath = `/v1/projects/${t.project.id}/mail/failed`;
    const failed = await waitFor('the dead letter', async () => {
      const r = await request(t.app).get(failedPath).set(bearer(t.project.secretKey)).expect(200);
      return r.body.jobs.length ? r.body.jobs : undefined;
    });
    expect(failed).toEqual([
      {
        id: mail.id,
        kind: 'reset',
        to: 'dead-letter@example.com',
        attempts: 2,
        error: expect.stringContaining('EISDIR'),
        created_at: mail.created_at,
        failed_at: expect.any(String),
      },
    ]);
    await request(t.app).get(failedPath).set(bearer(t.project.publicKey)).expect(403);
    await request(t.app).post(`${failedPath}/${mail.id}/retry`).set(bearer(t.project.publicKey)).expect(403);

    fs.rmSync(broken, { recursive: true });
    const retried = await request(t.app).post(`${failedPath}/${mail.id}/retry`).set(bearer(t.project.secretKey)).expect(200);
    expect(retried.body).toEqual({ retried: true, id: mail.id });
    await waitFor('the delivery', async () => {
      const r = await request(t.app)
        .get(`/v1/projects/${t.project.id}/mailbox?to=dead-letter%40example.com`)
        .set(bearer(t.project.secretKey))
        .expect(200);
      return r.body.messages.length === 1;
    });
    expect((await request(t.app).get(failedPath).set(bearer(t.project.secretKey)).expect(200)).body).toEqual({ jobs: [] });
    const unknown = await request(t.app).post(`${failedPath}/mail_nope/retry`).set(bearer(t.project.secretKey)).expect(404);
    expect(unknown.body).toMatchObject({ error: 'not_found' });
  });
});
