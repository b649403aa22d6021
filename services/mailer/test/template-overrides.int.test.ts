import fs from 'node:fs';
import path from 'node:path';
import { asProjectId, createMailQueueFromConfig, type MailQueue } from '@plinth/shared';
import { testMailJob } from '@plinth/shared/testing/mail-job';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { asGateway } from './support/internal-request';
import { makeDataDir, removeDataDir, startMailer, type MailerFixture } from './support/mailer-fixture';

describe('per-project template overrides from PLINTH_MAIL_TEMPLATES_DIR', () => {
  let dataDir: string;
  let queue: MailQueue;
  let mailer: MailerFixture;

  beforeEach(async () => {
    dataDir = makeDataDir();
    const templates = path.join(dataDir, 'templates');
    fs.mkdirSync(path.join(templates, 'acme'), { recursive: true });
    fs.writeFileSync(path.join(templates, 'acme', 'otp.subject'), 'Acme code {{code}}');
    fs.writeFileSync(path.join(templates, 'acme', 'otp.html'), '<h1>{{code}}</h1><p>for {{to}}</p>');
    queue = createMailQueueFromConfig({ PLINTH_DATA_DIR: dataDir, PLINTH_MAIL_ATTEMPTS: 2, PLINTH_MAIL_BACKOFF_MS: 20, PLINTH_MAIL_POLL_MS: 10 });
    mailer = await startMailer({ PLINTH_DATA_DIR: dataDir, PLINTH_MAIL_TEMPLATES_DIR: templates }, { queue });
  });

  afterEach(async () => {
    await mailer.service.close();
    await queue.close();
    removeDataDir(dataDir);
  });

  it("renders the project's files, escaped, and the built-in text part", async () => {
    await queue.enqueue(testMailJob({ kind: 'otp', to: 'tom&jerry@example.com', data: { code: '777111' } }));
    const [message] = await waitFor('the message', async () => {
      const res = await asGateway(mailer.service.app, asProjectId('acme')).get('/v1/projects/acme/mailbox').expect(200);
      return res.body.messages.length ? res.body.messages : undefined;
    });
    expect(message).toMatchObject({
      subject: 'Acme code 777111',
      html: '<h1>777111</h1><p>for tom&amp;jerry@example.com</p>',
      text: expect.stringContaining('Your sign-in code for acme is:'),
    });
  });
});
