import { asProjectId } from '@plinth/shared';
import type { MailboxMessage, MailboxStore } from '@plinth/mailer';

/** One test's storage; `open` again = the same mailbox after a restart. */
export interface MailboxStoreFixture {
  open(): MailboxStore;
  cleanup(): Promise<void>;
}

const acme = asProjectId('acme');
const globex = asProjectId('globex');

function message(id: string, to: string, created_at: string): MailboxMessage {
  return { id, to, subject: `s-${id}`, text: `t-${id}`, html: `<p>${id}</p>`, kind: 'verify', data: { token: `tok-${id}` }, created_at };
}

/** The MailboxStore contract: every adapter must pass it unchanged. */
export function describeMailboxStoreContract(name: string, makeFixture: () => Promise<MailboxStoreFixture>): void {
  describe(`MailboxStore contract: ${name}`, () => {
    let fixture: MailboxStoreFixture;
    let store: MailboxStore;

    beforeEach(async () => {
      fixture = await makeFixture();
      store = fixture.open();
    });

    afterEach(async () => {
      await store.close();
      await fixture.cleanup();
    });

    it('lists messages newest first, ties broken by the later id', async () => {
      await store.save(acme, message('m1', 'a@x.io', '2026-01-01T00:00:01.000Z'));
      await store.save(acme, message('m3', 'b@x.io', '2026-01-01T00:00:02.000Z'));
      await store.save(acme, message('m2', 'a@x.io', '2026-01-01T00:00:02.000Z'));
      expect((await store.list(acme, { limit: 50 })).map((m) => m.id)).toEqual(['m3', 'm2', 'm1']);
    });

    it('returns messages exactly as saved', async () => {
      const saved = { ...message('m1', 'a@x.io', '2026-01-01T00:00:01.000Z'), kind: 'otp' as const, data: { code: '123456' } };
      await store.save(acme, saved);
      expect(await store.list(acme, { limit: 50 })).toEqual([saved]);
    });

    it('keeps the first copy when the same id is saved again', async () => {
      await store.save(acme, message('m1', 'a@x.io', '2026-01-01T00:00:01.000Z'));
      await store.save(acme, { ...message('m1', 'a@x.io', '2026-01-01T00:00:09.000Z'), subject: 'second' });
      expect((await store.list(acme, { limit: 50 })).map((m) => [m.id, m.subject])).toEqual([['m1', 's-m1']]);
    });

    it('filters by recipient case-insensitively and honours the limit', async () => {
      await store.save(acme, message('m1', 'Ada@X.io', '2026-01-01T00:00:01.000Z'));
      await store.save(acme, message('m2', 'bob@x.io', '2026-01-01T00:00:02.000Z'));
      await store.save(acme, message('m3', 'ada@x.io', '2026-01-01T00:00:03.000Z'));
      expect((await store.list(acme, { to: 'ADA@x.io', limit: 50 })).map((m) => m.id)).toEqual(['m3', 'm1']);
      expect((await store.list(acme, { to: 'ada@x.io', limit: 1 })).map((m) => m.id)).toEqual(['m3']);
      expect((await store.list(acme, { limit: 2 })).map((m) => m.id)).toEqual(['m3', 'm2']);
    });

    it("keeps projects apart, the same id included", async () => {
      await store.save(acme, message('m1', 'a@x.io', '2026-01-01T00:00:01.000Z'));
      await store.save(globex, { ...message('m1', 'a@x.io', '2026-01-01T00:00:01.000Z'), subject: 'globex' });
      expect((await store.list(acme, { limit: 50 })).map((m) => m.subject)).toEqual(['s-m1']);
      expect((await store.list(globex, { limit: 50 })).map((m) => m.subject)).toEqual(['globex']);
      expect(await store.list(asProjectId('initech'), { limit: 50 })).toEqual([]);
    });

    it('keeps messages across a restart', async () => {
      await store.save(acme, message('m1', 'a@x.io', '2026-01-01T00:00:01.000Z'));
      await store.close();
      store = fixture.open();
      expect((await store.list(acme, { limit: 50 })).map((m) => m.id)).toEqual(['m1']);
    });

    it('purgeProject deletes every message of the project and nothing of another', async () => {
      await store.save(acme, message('m1', 'a@x.io', '2026-01-01T00:00:01.000Z'));
      await store.save(acme, message('m2', 'b@x.io', '2026-01-01T00:00:02.000Z'));
      await store.save(globex, message('m1', 'a@x.io', '2026-01-01T00:00:01.000Z'));
      await store.purgeProject(acme);
      await store.purgeProject(acme);
      expect(await store.list(acme, { limit: 50 })).toEqual([]);
      expect((await store.list(globex, { limit: 50 })).map((m) => m.id)).toEqual(['m1']);
    });
  });
}
