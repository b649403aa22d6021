import { itLeakedNoPasswords, useMailboxPlinth } from './mailbox-plinth';

const VICTIM = 'victim@example.com';
const ATTACKER_IP = '198.51.100.66';
const VICTIM_IP = '203.0.113.20';
const PASSWORD = 'code limits password';

/**
 * Limits that stop the attacker, not the victim: wrong codes and requests count
 * against the requesting address and the (address, e-mail) pair, never against the e-mail
 * alone. Default limits (30 per address, 10 per e-mail or pair per 5 minutes); the client
 * address is the X-Forwarded-For hop the composition trusts (PLINTH_TRUST_PROXY=1).
 */
describe('Auth API: code sign-in and reset cannot be locked by someone else', () => {
  const t = useMailboxPlinth({ PLINTH_RATE_LIMIT_IP: '1000', PLINTH_RATE_LIMIT_EMAIL: '10' });
  beforeEach(async () => {
    await t.useNewProject({ send_verification_on_signup: false });
    await t.post('/auth/signup', { email: VICTIM, password: PASSWORD });
  });

  const redeem = (code: string, ip: string) => t.post('/auth/otp/redeem', { email: VICTIM, code }, undefined, ip);

  it('100 wrong codes from one address, then the victim\'s right code from another address → signed in', async () => {
    await t.post('/auth/otp/request', { email: VICTIM }, undefined, VICTIM_IP);
    const code = (await t.nextMail(VICTIM, 'otp')).data.code!;
    const wrong = code === '000000' ? '000001' : '000000';
    const statuses = new Set<number>();
    for (let i = 0; i < 100; i++) statuses.add((await redeem(wrong, ATTACKER_IP)).status);
    expect([...statuses].sort()).toEqual([401, 429]);
    // The attacker's own address is stopped, right code or not.
    expect((await redeem(code, ATTACKER_IP)).status).toBe(429);

    const victim = await redeem(code, VICTIM_IP);
    expect(victim.status).toBe(200);
    expect(victim.body.user.email).toBe(VICTIM);
  });

  it('someone else asking for codes and reset mails for the victim\'s address never makes the victim\'s requests 429', async () => {
    const attacker: number[] = [];
    for (let i = 0; i < 30; i++) {
      attacker.push((await t.post('/auth/otp/request', { email: VICTIM }, undefined, ATTACKER_IP)).status);
      attacker.push((await t.post('/auth/password/forgot', { email: VICTIM }, undefined, ATTACKER_IP)).status);
    }
    expect(attacker).toContain(429);

    const ask = await t.post('/auth/otp/request', { email: VICTIM }, undefined, VICTIM_IP);
    expect(ask.status).toBe(200);
    expect(ask.body).toEqual({ sent: true });
    const forgot = await t.post('/auth/password/forgot', { email: VICTIM }, undefined, VICTIM_IP);
    expect(forgot.body).toEqual({ sent: true });
    // Sends stay capped per address: one code and one reset mail in the minute, whoever asked.
    await t.nextMail(VICTIM, 'otp');
    expect(await t.countMails(VICTIM, 'otp')).toBe(1);
    expect(await t.countMails(VICTIM, 'reset')).toBe(1);
    // The code the victim reads still signs them in.
    const code = (await t.call({ method: 'get', path: `/mailbox?to=${VICTIM}`, key: 'secret' })).body.messages.find((m: { kind: string }) => m.kind === 'otp').data.code;
    expect((await redeem(code, VICTIM_IP)).status).toBe(200);
  });

  it('the password sign-in is still never refused to its owner while someone burns the e-mail\'s failure budget', async () => {
    for (let i = 0; i < 15; i++) await t.post('/auth/signin', { email: VICTIM, password: `guess ${i}` }, undefined, ATTACKER_IP);
    expect((await t.post('/auth/signin', { email: VICTIM, password: 'another guess' }, undefined, ATTACKER_IP)).status).toBe(429);
    expect((await t.post('/auth/signin', { email: VICTIM, password: PASSWORD }, undefined, VICTIM_IP)).status).toBe(200);
  });

  itLeakedNoPasswords(t);
});
