import type { MailJob, MailQueue } from '@plinth/shared';
import { testMailJob } from '@plinth/shared/testing/mail-job';
import { waitFor } from '@plinth/shared/testing/wait-for';
import type { MailSettingsLookup } from '@plinth/mailer';
import { SmtpCapture } from './support/smtp-capture';
import { metricValue, removeDataDir, REDIS_URL, startMailer, uniqueBullQueue, type MailerFixture } from './support/mailer-fixture';

function job(kind: MailJob['kind'], overrides: Partial<MailJob> = {}): MailJob {
  return testMailJob({ kind, ...(kind === 'otp' ? { data: { code: '482913' } } : {}), ...overrides });
}

describe('mailer over real SMTP, jobs through BullMQ (real Redis)', () => {
  let smtp: SmtpCapture;
  let queue: MailQueue;
  let disposeQueue: () => Promise<void>;
  let mailer: MailerFixture;

  const settings: MailSettingsLookup = {
    forProject: async (p) =>
      p === 'branded' ? { mail_from: 'Branded App <hello@branded.test>', redirect_url: 'https://branded.test/welcome?lang=en' } : null,
  };

  beforeEach(async () => {
    smtp = new SmtpCapture();
    await smtp.start(0);
    ({ queue, dispose: disposeQueue } = uniqueBullQueue({ attempts: 3, backoffMs: 20 }));
    mailer = await startMailer(
      {
        REDIS_URL,
        SMTP_URL: smtp.url,
        PLINTH_MAIL_FROM: 'Acme Accounts <accounts@acme.test>',
        PLINTH_PUBLIC_URL: 'https://app.acme.test',
      },
      { queue, mailSettings: settings },
    );
  });

  afterEach(async () => {
    await mailer.service.close();
    await disposeQueue();
    await smtp.stop();
    removeDataDir(mailer.dataDir);
  });

  it('delivers a verify job: right to, from and subject, a link carrying ?token=', async () => {
    const verify = job('verify');
    await queue.enqueue(verify);
    const [mail] = await waitFor('the mail', () => (smtp.messages.length ? smtp.messages : undefined));
    const token = (verify.data as { token: string }).token;
    expect(mail).toMatchObject({
      from: 'accounts@acme.test',
      to: ['ada@example.com'],
      subject: 'Confirm your e-mail address for acme',
      messageId: `<${verify.id}@acme.test>`,
    });
    const link = `https://app.acme.test/v1/projects/acme/auth/action?token=${token}&type=verify`;
    expect(mail!.text).toContain(link);
    expect(mail!.html).toContain(`href="${link.replace('&', '&amp;')}"`);
    expect(mail!.headers.get('x-plinth-mail-kind')).toBe('verify');
    expect(await metricValue(mailer.service.app, 'plinth_mail_sent_total', { kind: 'verify', transport: 'smtp' })).toBe(1);
    expect(await metricValue(mailer.service.app, 'plinth_mail_delivery_latency_seconds_count', { kind: 'verify' })).toBe(1);
  });

  it('delivers a reset job with a reset link', async () => {
    const reset = job('reset', { to: 'grace@example.com' });
    await queue.enqueue(reset);
    const [mail] = await waitFor('the mail', () => (smtp.messages.length ? smtp.messages : undefined));
    const token = (reset.data as { token: string }).token;
    expect(mail).toMatchObject({ from: 'accounts@acme.test', to: ['grace@example.com'], subject: 'Reset your acme password' });
    expect(mail!.text).toContain(`https://app.acme.test/v1/projects/acme/auth/action?token=${token}&type=reset`);
    expect(mail!.text).toContain('expires in 1 hour');
  });

  it('delivers an otp job with the code in the body and no link', async () => {
    await queue.enqueue(job('otp'));
    const [mail] = await waitFor('the mail', () => (smtp.messages.length ? smtp.messages : undefined));
    expect(mail).toMatchObject({ to: ['ada@example.com'], subject: 'Your acme sign-in code: 482913' });
    expect(mail!.text).toContain('482913');
    expect(mail!.html).toContain('<strong>482913</strong>');
    expect(mail!.text).not.toContain('token=');
  });

  it("uses the project's own sender and link base when the settings lookup has them", async () => {
    const verify = job('verify', { project: 'branded' });
    await queue.enqueue(verify);
    const [mail] = await waitFor('the mail', () => (smtp.messages.length ? smtp.messages : undefined));
    const token = (verify.data as { token: string }).token;
    expect(mail!.from).toBe('hello@branded.test');
    expect(mail!.text).toContain(`https://branded.test/welcome?lang=en&token=${token}&type=verify`);
  });

  it('delivers each of several jobs once, the duplicate enqueue of one included', async () => {
    const jobs = [job('verify', { to: 'a@example.com' }), job('reset', { to: 'b@example.com' }), job('otp', { to: 'c@example.com' })];
    for (const j of jobs) await queue.enqueue(j);
    await queue.enqueue(jobs[0]!);
    await waitFor('three mails', () => smtp.messages.length === 3);
    await waitFor('the queue to drain', async () => {
      const counts = await queue.counts();
      return counts.waiting + counts.active === 0;
    });
    expect(smtp.messages.map((m) => m.to[0]).sort()).toEqual(['a@example.com', 'b@example.com', 'c@example.com']);
  });
});
