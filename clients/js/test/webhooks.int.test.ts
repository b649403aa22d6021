import { Webhook } from 'standardwebhooks';
import { startWebhookReceiver, type WebhookReceiver } from '@plinth/testing/webhook-receiver';
import { startSdkFixture, type SdkFixture } from './fixture';

/** `admin.webhooks` of `@plinth/client/admin` against a real standalone Plinth and a real receiver. */
describe('@plinth/client/admin webhooks', () => {
  let f: SdkFixture;
  let r: WebhookReceiver;
  beforeAll(async () => {
    f = await startSdkFixture();
    r = await startWebhookReceiver();
    await f.admin.collections.create({ name: 'sdk_hooked', fields: { n: { type: 'integer' } } });
  });
  afterAll(async () => {
    await r.close();
    await f.close();
  });

  const eventually = async <T>(fn: () => Promise<T>, ok: (v: T) => boolean): Promise<T> => {
    for (let i = 0; ; i++) {
      const v = await fn();
      if (ok(v) || i > 300) return v;
      await new Promise((res) => setTimeout(res, 50));
    }
  };

  it('creates (secret shown once), lists, updates, lists deliveries, replays a dead letter, deletes', async () => {
    const hook = await f.admin.webhooks.create({ url: r.url, events: ['record.created'], collections: ['sdk_hooked'] });
    expect(hook).toMatchObject({ id: expect.stringMatching(/^wh_/), enabled: true, secret: expect.stringMatching(/^whsec_/) });
    expect(await f.admin.webhooks.list()).toEqual([expect.not.objectContaining({ secret: expect.anything() })]);
    await expect(f.admin.webhooks.create({ url: 'http://169.254.169.254/', events: ['record.created'] })).rejects.toMatchObject({ status: 400, code: 'invalid_request' });

    r.answer(500);
    const res = await fetch(`${f.url}/v1/projects/${f.project}/collections/sdk_hooked/records`, {
      method: 'POST',
      headers: { authorization: `Bearer ${f.sk}`, 'content-type': 'application/json' },
      body: JSON.stringify({ data: { n: 7 } }),
    });
    expect(res.status).toBe(201);
    const [dead] = await eventually(() => f.admin.webhooks.deliveries(hook.id, { status: 'dead' }), (ds) => ds.length === 1);
    expect(dead).toMatchObject({ event_type: 'record.created', status: 'dead', last_status: 500 });
    r.answer(200);
    expect(await f.admin.webhooks.replay(hook.id, dead!.id)).toMatchObject({ id: dead!.id, status: 'pending' });
    const [done] = await eventually(() => f.admin.webhooks.deliveries(hook.id), (ds) => ds[0]?.status === 'delivered');
    expect(done).toMatchObject({ status: 'delivered', last_status: 200 });
    const ok = r.received.find((g) => g.status === 200)!;
    expect(new Webhook(hook.secret).verify(ok.body, ok.headers)).toMatchObject({ type: 'record.created', data: { record: { n: 7 } } });

    expect(await f.admin.webhooks.update(hook.id, { enabled: false })).toMatchObject({ enabled: false });
    await f.admin.webhooks.delete(hook.id);
    await expect(f.admin.webhooks.get(hook.id)).rejects.toMatchObject({ status: 404 });
  });
});
