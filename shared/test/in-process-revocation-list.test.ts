import { asProjectId } from '../src/types';
import { InProcessRevocationList, REVOCATION_RETENTION_SECONDS } from '../src/revocation';

describe('InProcessRevocationList', () => {
  const p = asProjectId('proj-one');
  const q = asProjectId('proj-two');

  it('refuses tokens issued at or before the revocation, of that project and sid only', async () => {
    const list = new InProcessRevocationList(() => 1000);
    list.add(p, 'ses_a', 500);
    expect(await list.isRevoked(p, 'ses_a', 499)).toBe(true);
    expect(await list.isRevoked(p, 'ses_a', 500)).toBe(true);
    expect(await list.isRevoked(p, 'ses_a', 501)).toBe(false);
    expect(await list.isRevoked(q, 'ses_a', 400)).toBe(false);
    expect(await list.isRevoked(p, 'ses_b', 400)).toBe(false);
  });

  it('keeps the earliest revocation time when a sid is revoked twice', async () => {
    const list = new InProcessRevocationList(() => 1000);
    list.add(p, 'ses_a', 500);
    list.add(p, 'ses_a', 900);
    expect(await list.isRevoked(p, 'ses_a', 600)).toBe(false);
  });

  it('tells subscribers about every revocation until they unsubscribe', () => {
    const list = new InProcessRevocationList(() => 1000);
    const heard: string[] = [];
    const off = list.subscribe((project, sid, at) => heard.push(`${project}/${sid}@${at}`));
    list.add(p, 'ses_a', 500);
    off();
    list.add(p, 'ses_b', 501);
    expect(heard).toEqual(['proj-one/ses_a@500']);
  });

  it('forgets markers older than the retention once it prunes', async () => {
    let now = 10_000;
    const list = new InProcessRevocationList(() => now);
    list.add(p, 'ses_old', now);
    now += REVOCATION_RETENTION_SECONDS + 1;
    for (let i = 0; i < 999; i++) list.add(p, `ses_${i}`, now);
    expect(await list.isRevoked(p, 'ses_old', 0)).toBe(false);
    expect(await list.isRevoked(p, 'ses_998', 0)).toBe(true);
  });
});
