/**
 * The webhook store contract (docs/webhooks.md "What is stored where"): what every WebhookStore
 * adapter must do — webhooks scoped by project, deliveries kept once per id and listed newest
 * first, the failure run that disables a webhook, the dispatch lease one replica holds at a time,
 * and the pruning of delivered deliveries.
 */
import { asProjectId } from '@plinth/shared';
import { newStoredWebhook, type StoredWebhook, type WebhookStore } from '../src/webhooks/webhook-store';

const p = asProjectId('hooks-contract');
const q = asProjectId('hooks-contract-other');
const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:00:01.000Z';
const T2 = '2026-01-01T00:00:02.000Z';
const T3 = '2026-01-01T00:00:03.000Z';

const hook = (id: string, project = p, at = T0): StoredWebhook =>
  newStoredWebhook({ id, project, url: `https://example.com/${id}`, events: ['record.created'], collections: null, secret: 'sealed' }, at);

export function describeWebhookStoreContract(name: string, open: () => Promise<{ store: WebhookStore; close: () => Promise<void> }>): void {
  describe(`webhook store contract: ${name}`, () => {
    let store: WebhookStore;
    let close: () => Promise<void>;
    beforeEach(async () => {
      ({ store, close } = await open());
    });
    afterEach(async () => close());

    it('keeps webhooks per project, oldest first; another project never sees, changes or deletes them', async () => {
      await store.insert(hook('wh_b', p, T1));
      await store.insert({ ...hook('wh_a', p, T0), collections: ['posts', 'tags'], events: ['record.created', 'record.deleted'] });
      await store.insert(hook('wh_x', q));
      expect((await store.list(p)).map((h) => h.id)).toEqual(['wh_a', 'wh_b']);
      expect(await store.count(p)).toBe(2);
      expect(await store.count(q)).toBe(1);
      expect(await store.get(p, 'wh_a')).toEqual({ ...hook('wh_a', p, T0), collections: ['posts', 'tags'], events: ['record.created', 'record.deleted'] });
      expect(await store.get(q, 'wh_a')).toBeNull();
      expect(await store.update(q, 'wh_a', { url: 'https://evil.example/' }, T1)).toBeNull();
      expect(await store.delete(q, 'wh_a')).toBe(false);
      expect((await store.get(p, 'wh_a'))!.url).toBe('https://example.com/wh_a');
    });

    it('updates what is given; disabling says so, enabling clears the reason and the failure run and moves enabled_at', async () => {
      await store.insert({ ...hook('wh_a'), collections: ['posts'] });
      const changed = await store.update(p, 'wh_a', { url: 'https://example.com/new', events: ['record.updated'] }, T1);
      expect(changed).toMatchObject({ url: 'https://example.com/new', events: ['record.updated'], collections: ['posts'], enabled: true, updated_at: T1, created_at: T0, enabled_at: T0 });
      expect((await store.update(p, 'wh_a', { collections: null }, T1))!.collections).toBeNull();
      expect(await store.update(p, 'wh_a', { enabled: false }, T1)).toMatchObject({ enabled: false, disabled_reason: 'disabled', enabled_at: T0 });
      expect(await store.countFailure(p, 'wh_a', 5, T1)).toBe(false);
      expect((await store.get(p, 'wh_a'))!.consecutive_failures).toBe(1);
      expect(await store.update(p, 'wh_a', { enabled: true }, T2)).toMatchObject({ enabled: true, disabled_reason: null, consecutive_failures: 0, updated_at: T2, enabled_at: T2 });
      // Enabling one that is enabled already does not move it.
      expect(await store.update(p, 'wh_a', { enabled: true }, T3)).toMatchObject({ updated_at: T3, enabled_at: T2 });
      expect(await store.update(p, 'wh_none', { enabled: true }, T2)).toBeNull();
    });

    it('a delivery is recorded once per id, listed newest first and by status', async () => {
      await store.insert(hook('wh_a'));
      expect(await store.addDelivery(p, { id: 'd_1', webhook: 'wh_a', event_id: 'evt_1', event_type: 'record.created' }, T0)).toBe('pending');
      await store.addDelivery(p, { id: 'd_2', webhook: 'wh_a', event_id: 'evt_2', event_type: 'record.created' }, T1);
      await store.addDelivery(p, { id: 'd_3', webhook: 'wh_a', event_id: 'evt_3', event_type: 'record.deleted' }, T1);
      await store.recordAttempt(p, 'd_1', { status: 'dead', last_status: 500, last_error: 'receiver answered 500' }, T2);
      // Again (a dispatcher redoing a batch, an event fanned out again): left as it is, answering its status.
      expect(await store.addDelivery(p, { id: 'd_1', webhook: 'wh_a', event_id: 'evt_1', event_type: 'record.created' }, T2)).toBe('dead');
      expect(await store.addDelivery(p, { id: 'd_2', webhook: 'wh_a', event_id: 'evt_2', event_type: 'record.created' }, T2)).toBe('pending');
      expect((await store.listDeliveries(p, 'wh_a', { limit: 10 })).map((d) => d.id)).toEqual(['d_3', 'd_2', 'd_1']);
      expect(await store.listDeliveries(p, 'wh_a', { limit: 2 })).toHaveLength(2);
      expect(await store.getDelivery(p, 'd_1')).toEqual({
        id: 'd_1',
        webhook: 'wh_a',
        event_id: 'evt_1',
        event_type: 'record.created',
        status: 'dead',
        attempts: 1,
        last_status: 500,
        last_error: 'receiver answered 500',
        created_at: T0,
        updated_at: T2,
      });
      expect((await store.listDeliveries(p, 'wh_a', { status: 'dead', limit: 10 })).map((d) => d.id)).toEqual(['d_1']);
      expect(await store.getDelivery(q, 'd_1')).toBeNull();
      await store.setStatus(p, 'd_1', 'pending', T2);
      expect((await store.listDeliveries(p, 'wh_a', { status: 'pending', limit: 10 })).map((d) => d.id)).toEqual(['d_3', 'd_2', 'd_1']);
    });

    it('pending deliveries are listed with their event, every project, in pages, until delivered or dead', async () => {
      await store.insert(hook('wh_a'));
      const event = (id: string) => ({ id, type: 'record.created' as const, timestamp: T0, collection: 'notes', data: { project: 'x', record: { id } } });
      await store.addDelivery(p, { id: 'd_1', webhook: 'wh_a', event_id: 'evt_1', event_type: 'record.created' }, T0, event('evt_1'));
      await store.addDelivery(q, { id: 'd_2', webhook: 'wh_b', event_id: 'evt_2', event_type: 'record.created' }, T0, event('evt_2'));
      await store.addDelivery(p, { id: 'd_3', webhook: 'wh_a', event_id: 'evt_3', event_type: 'record.created' }, T1, event('evt_3'));
      await store.addDelivery(p, { id: 'd_4', webhook: 'wh_a', event_id: 'evt_4', event_type: 'record.created' }, T1, event('evt_4'));
      // Stored before events were kept: nothing to enqueue it with.
      await store.addDelivery(p, { id: 'd_old', webhook: 'wh_a', event_id: 'evt_old', event_type: 'record.created' }, T0);
      await store.recordAttempt(p, 'd_4', { status: 'delivered', last_status: 200, last_error: null }, T2);
      const first = await store.pendingDeliveries(2);
      expect(first).toEqual([
        { project: p, id: 'd_1', webhook: 'wh_a', event: event('evt_1'), updated_at: T0 },
        { project: q, id: 'd_2', webhook: 'wh_b', event: event('evt_2'), updated_at: T0 },
      ]);
      expect(await store.pendingDeliveries(2, first[1])).toEqual([{ project: p, id: 'd_3', webhook: 'wh_a', event: event('evt_3'), updated_at: T1 }]);
      expect(await store.getDelivery(p, 'd_1')).not.toHaveProperty('event');
      expect(await store.deliveryEvent(p, 'd_4')).toEqual(event('evt_4'));
      expect(await store.deliveryEvent(p, 'd_old')).toBeNull();
      expect(await store.deliveryEvent(q, 'd_1')).toBeNull();
    });

    it('dead deliveries in a row disable the webhook once; a delivered one resets the run', async () => {
      await store.insert(hook('wh_a'));
      await store.addDelivery(p, { id: 'd_1', webhook: 'wh_a', event_id: 'evt_1', event_type: 'record.created' }, T0);
      expect(await store.countFailure(p, 'wh_a', 3, T1)).toBe(false);
      expect(await store.countFailure(p, 'wh_a', 3, T1)).toBe(false);
      await store.recordAttempt(p, 'd_1', { status: 'delivered', last_status: 204, last_error: null }, T1);
      expect(await store.get(p, 'wh_a')).toMatchObject({ consecutive_failures: 0, enabled: true });
      expect((await store.getDelivery(p, 'd_1'))!).toMatchObject({ status: 'delivered', attempts: 1, last_status: 204 });
      expect(await store.countFailure(p, 'wh_a', 3, T1)).toBe(false);
      expect(await store.countFailure(p, 'wh_a', 3, T1)).toBe(false);
      expect(await store.countFailure(p, 'wh_a', 3, T2)).toBe(true);
      expect(await store.get(p, 'wh_a')).toMatchObject({ enabled: false, disabled_reason: 'consecutive_failures', consecutive_failures: 3 });
      // Already disabled: counted, not disabled again.
      expect(await store.countFailure(p, 'wh_a', 3, T2)).toBe(false);
      expect(await store.countFailure(p, 'wh_none', 3, T2)).toBe(false);
    });

    it('deleting a webhook deletes its deliveries; a purge deletes only the project’s', async () => {
      await store.insert(hook('wh_a'));
      await store.insert(hook('wh_b'));
      await store.insert(hook('wh_x', q));
      for (const [project, webhook, id] of [[p, 'wh_a', 'd_a'], [p, 'wh_b', 'd_b'], [q, 'wh_x', 'd_x']] as const) {
        await store.addDelivery(project, { id, webhook, event_id: `evt_${id}`, event_type: 'record.created' }, T0);
      }
      expect(await store.delete(p, 'wh_a')).toBe(true);
      expect(await store.delete(p, 'wh_a')).toBe(false);
      expect(await store.getDelivery(p, 'd_a')).toBeNull();
      expect(await store.getDelivery(p, 'd_b')).not.toBeNull();
      await store.purgeProject(p);
      expect(await store.list(p)).toEqual([]);
      expect(await store.getDelivery(p, 'd_b')).toBeNull();
      expect((await store.list(q)).map((h) => h.id)).toEqual(['wh_x']);
      expect(await store.getDelivery(q, 'd_x')).not.toBeNull();
    });

    it('the lease: one holder at a time, renewed by it, taken by another once it lapsed', async () => {
      expect(await store.acquireLease('dispatch', 'a', 1_000, 100)).toBe(true);
      expect(await store.acquireLease('dispatch', 'b', 1_050, 100)).toBe(false);
      expect(await store.acquireLease('dispatch', 'a', 1_090, 100)).toBe(true); // renewed until 1,190
      expect(await store.acquireLease('dispatch', 'b', 1_150, 100)).toBe(false);
      expect(await store.acquireLease('other', 'b', 1_150, 100)).toBe(true);
      expect(await store.acquireLease('dispatch', 'b', 1_200, 100)).toBe(true);
      expect(await store.acquireLease('dispatch', 'a', 1_250, 100)).toBe(false);
      // Many replicas at once on a free lease: exactly one gets it.
      const got = await Promise.all(['r1', 'r2', 'r3', 'r4'].map((h) => store.acquireLease('race', h, 5_000, 100)));
      expect(got.filter(Boolean)).toHaveLength(1);
    });

    it('prunes delivered deliveries older than the cut, a bounded number at a time; dead and recent ones stay', async () => {
      await store.insert(hook('wh_a'));
      for (const id of ['d_1', 'd_2', 'd_3', 'd_4']) await store.addDelivery(p, { id, webhook: 'wh_a', event_id: `evt_${id}`, event_type: 'record.created' }, T0);
      await store.recordAttempt(p, 'd_1', { status: 'delivered', last_status: 200, last_error: null }, T0);
      await store.recordAttempt(p, 'd_2', { status: 'delivered', last_status: 200, last_error: null }, T0);
      await store.recordAttempt(p, 'd_3', { status: 'dead', last_status: 500, last_error: 'receiver answered 500' }, T0);
      await store.recordAttempt(p, 'd_4', { status: 'delivered', last_status: 200, last_error: null }, T2);
      expect(await store.pruneDelivered(T1, 1)).toBe(1);
      expect(await store.pruneDelivered(T1, 10)).toBe(1);
      expect(await store.pruneDelivered(T1, 10)).toBe(0);
      expect((await store.listDeliveries(p, 'wh_a', { limit: 10 })).map((d) => [d.id, d.status])).toEqual([
        ['d_4', 'delivered'],
        ['d_3', 'dead'],
      ]);
    });
  });
}
