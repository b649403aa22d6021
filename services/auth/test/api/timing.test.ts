import { useAuthTestService } from './auth-test-service';

/**
 * A SMOKE CHECK, not a measurement: password/forgot and otp/request answer before they look the
 * e-mail up, so known and unknown addresses should take about the same time. The bound is
 * deliberately generous (3× plus 25 ms) so a loaded CI machine never fails it; before the fix a
 * known address paid for a database write and an enqueue on top (a bcrypt-free path, so the
 * difference was small but systematic). Medians of 15 requests each, interleaved.
 */
describe('Auth API: forgot and otp/request take the same time for known and unknown e-mails (smoke check)', () => {
  const t = useAuthTestService();

  async function durations(path: string, project: string, known: boolean): Promise<number> {
    const email = known ? 'ada@example.com' : `nobody-${Math.random().toString(36).slice(2)}@example.com`;
    const start = process.hrtime.bigint();
    const r = await t.call({ method: 'post', path, project, body: { email } });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    expect(r.body).toEqual({ sent: true });
    t.advance(61_000); // past the per-user mail throttle, so the known path does its full work every time
    return ms;
  }

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

  it.each(['/auth/password/forgot', '/auth/otp/request'])('%s', async (path) => {
    const p = await t.enabledProject({ send_verification_on_signup: false });
    await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'ada@example.com', password: 'timing password' } });
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 15; i++) {
      known.push(await durations(path, p, true));
      unknown.push(await durations(path, p, false));
    }
    await t.service.idle();
    expect(median(known)).toBeLessThan(median(unknown) * 3 + 25);
    expect(median(unknown)).toBeLessThan(median(known) * 3 + 25);
    expect((await t.mails(p, 'ada@example.com')).length).toBe(15);
  });
});
