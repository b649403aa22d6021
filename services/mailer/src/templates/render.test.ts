import { asProjectId, type MailJob } from '@plinth/shared';
import { DEFAULT_TEMPLATES } from './default-templates';
import { escapeHtml, interpolate, mailLink, renderMail } from './render';

const settings = { mail_from: 'Acme <no-reply@acme.test>', redirect_url: 'https://app.acme.test/auth' };

function job(overrides: Partial<MailJob> = {}): MailJob {
  return {
    id: 'mail_1',
    project: asProjectId('acme'),
    kind: 'verify',
    to: 'ada@example.com',
    data: { token: 'tok123' },
    created_at: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

describe('renderMail', () => {
  it('renders the built-in verify mail with the sender, subject and a ?token= link in both parts', () => {
    const mail = renderMail(job(), settings, DEFAULT_TEMPLATES.verify);
    expect(mail.from).toBe('Acme <no-reply@acme.test>');
    expect(mail.to).toBe('ada@example.com');
    expect(mail.subject).toBe('Confirm your e-mail address for acme');
    expect(mail.text).toContain('https://app.acme.test/auth?token=tok123&type=verify');
    expect(mail.html).toContain('<a href="https://app.acme.test/auth?token=tok123&amp;type=verify">');
  });

  it('the verify mail says what to do if the reader did not sign up', () => {
    const mail = renderMail(job(), settings, DEFAULT_TEMPLATES.verify);
    expect(mail.text).toContain('If you did not sign up');
    expect(mail.text).toContain('sign-in code');
    expect(mail.html).toContain('If you did not sign up');
  });

  it('renders the email-change link (to the new address) and the email-changed notice (to the old one)', () => {
    const change = renderMail(job({ kind: 'email-change', to: 'new@example.com' }), settings, DEFAULT_TEMPLATES['email-change']);
    expect(change.text).toContain('https://app.acme.test/auth?token=tok123&type=email-change');
    const notice = renderMail(job({ kind: 'email-changed', data: { new_email: 'new@example.com', token: 'cancel9' } }), settings, DEFAULT_TEMPLATES['email-changed']);
    expect(notice.subject).toBe('Your acme e-mail address is being changed');
    expect(notice.text).toContain('new@example.com');
    expect(notice.text).toContain('https://app.acme.test/auth?token=cancel9&type=email-change-cancel');
    expect(notice.html).toContain('<a href="https://app.acme.test/auth?token=cancel9&amp;type=email-change-cancel">');
  });

  it('an email-changed notice queued before cancel links existed renders without a link', () => {
    const notice = renderMail(job({ kind: 'email-changed', data: { new_email: 'new@example.com' } }), settings, DEFAULT_TEMPLATES['email-changed']);
    expect(notice.text).toContain('new@example.com');
    expect(notice.text).not.toContain('http');
    expect(notice.text).not.toContain('{{');
  });

  it('renders the otp mail with the code and no link', () => {
    const mail = renderMail(job({ kind: 'otp', data: { code: '004271' } }), settings, DEFAULT_TEMPLATES.otp);
    expect(mail.subject).toBe('Your acme sign-in code: 004271');
    expect(mail.text).toContain('004271');
    expect(mail.text).not.toContain('http');
  });

  it('escapes every value in the HTML part, and only there', () => {
    const template = { subject: '{{token}}', txt: '{{to}} {{token}}', html: '<p>{{to}} {{token}}</p>' };
    const mail = renderMail(job({ to: "o'neil&co@example.com", data: { token: '<b>"x"</b>' } }), settings, template);
    expect(mail.html).toBe('<p>o&#39;neil&amp;co@example.com &lt;b&gt;&quot;x&quot;&lt;/b&gt;</p>');
    expect(mail.text).toBe(`o'neil&co@example.com <b>"x"</b>`);
  });

  it('keeps the subject on one line whatever the template or values hold', () => {
    const mail = renderMail(job(), settings, { ...DEFAULT_TEMPLATES.verify, subject: 'Hello\r\nBcc: evil@example.com\n' });
    expect(mail.subject).toBe('Hello Bcc: evil@example.com');
  });
});

describe('template helpers', () => {
  it('leaves unknown variables as written and tolerates spaces inside braces', () => {
    expect(interpolate('{{ project }} / {{nope}}', { project: 'acme' }, (v) => v)).toBe('acme / {{nope}}');
  });

  it('adds the token to a redirect URL that already has a query, keeping it', () => {
    expect(mailLink('https://x.test/cb?lang=fr#top', 'reset', 'a b')).toBe('https://x.test/cb?lang=fr&token=a+b&type=reset#top');
  });

  it('escapes the five HTML-special characters', () => {
    expect(escapeHtml(`&<>"'`)).toBe('&amp;&lt;&gt;&quot;&#39;');
  });
});
