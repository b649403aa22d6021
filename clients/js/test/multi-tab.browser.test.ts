import type { Page } from 'playwright-core';
import type { PlinthClient } from '../src';
import { startBrowserRig, type BrowserRig } from './browser';
import { startSdkFixture, type SdkFixture } from './fixture';

const EMAIL = 'tabs@example.com';
const PASSWORD = 'multi tab password';
const TTL = 60; // the shortest access-token lifetime a project allows
const MARGIN = 56; // so each tab wants a refresh every ~4 s

/** What the test page puts on its global object. */
interface Tab {
  plinth: PlinthClient;
  events: string[];
  ready?: boolean;
  enableRealtime(url: string): void;
  live?: Array<{ kind: string; body?: string }>;
}

interface RefreshSeen {
  token: string;
  status: number;
  at: number;
}

/**
 * Two tabs of one origin in a real Chromium, sharing localStorage: they stay signed in across
 * several refresh cycles, never present one refresh token twice, and a sign-out in one signs out
 * the other. What the server was sent is counted by the same-origin proxy in front of it.
 */
describe('@plinth/client in a browser: several tabs, one session', () => {
  let f: SdkFixture;
  let rig: BrowserRig;
  let a: Page;
  let b: Page;

  const refreshes = (): RefreshSeen[] =>
    rig.proxy.log
      .filter((x) => x.method === 'POST' && x.path.endsWith('/auth/refresh'))
      .map((x) => ({ token: (JSON.parse(x.requestBody) as { refresh_token: string }).refresh_token, status: x.status, at: x.at }));

  const open = async (query = ''): Promise<Page> => {
    const p = await rig.context.newPage();
    await p.goto(`${rig.proxy.url}/${query}`);
    await p.waitForFunction(() => (globalThis as unknown as Tab).ready === true);
    return p;
  };

  beforeAll(async () => {
    f = await startSdkFixture({ access_token_ttl: TTL });
    await f.admin.collections.create({
      name: 'tab_notes',
      fields: { owner: { type: 'text', required: true }, body: { type: 'text' } },
      rules: { read: 'record.owner == auth.uid', create: 'data.owner == auth.uid' },
    });
    await f.admin.users.create({ email: EMAIL, password: PASSWORD });
    const page = `<!doctype html><meta charset="utf-8"><title>plinth tabs</title>
<script type="module">
  import { createClient } from '/sdk/index.js';
  import { enableRealtime } from '/sdk/realtime.js';
  window.enableRealtime = (url) => enableRealtime(window.plinth, { url });
  // ?nolocks: a browser without Web Locks
  if (location.search.includes('nolocks')) Object.defineProperty(navigator, 'locks', { value: undefined });
  const plinth = createClient({ url: location.origin, project: ${JSON.stringify(f.project)}, key: ${JSON.stringify(f.pk)},
    storage: localStorage, refreshMargin: ${MARGIN} });
  window.plinth = plinth;
  window.events = [];
  plinth.auth.onChange((event, s) => window.events.push(event));
  window.ready = true;
</script>`;
    rig = await startBrowserRig(f.url, page);
  }, 60_000);
  afterAll(async () => {
    await rig?.close();
    await f?.close();
  });

  it('both tabs stay signed in across 3+ refresh cycles, no refresh token presented twice; sign-out in one signs out both', async () => {
    a = await open();
    b = await open();
    const uid = await a.evaluate(async ([e, p]) => (await (globalThis as unknown as Tab).plinth.auth.signIn(e, p)).user.id, [EMAIL, PASSWORD] as const);
    // Tab B picks the session up from the shared storage.
    expect(await b.evaluate(async () => (await (globalThis as unknown as Tab).plinth.auth.user())?.email)).toBe(EMAIL);

    // Both tabs keep working while the session goes through at least three refreshes.
    let round = 0;
    while (refreshes().length < 3 || round < 3) {
      round++;
      for (const [tab, name] of [[a, 'a'], [b, 'b']] as const) {
        const seen = await tab.evaluate(
          async ([owner, body]) => {
            await (globalThis as unknown as Tab).plinth.collection('tab_notes').create({ owner, body });
            const me = await (globalThis as unknown as Tab).plinth.auth.user();
            const page = await (globalThis as unknown as Tab).plinth.collection('tab_notes').where('body', '==', body).get();
            return { email: me?.email, found: page.records.length };
          },
          [uid, `${name}-${round}`] as const,
        );
        expect(seen).toEqual({ email: EMAIL, found: 1 });
      }
      await new Promise((r) => setTimeout(r, 1500));
      if (round > 40) throw new Error(`only ${refreshes().length} refreshes in ${round} rounds`);
    }
    expect(refreshes().length).toBeGreaterThanOrEqual(3); // timer-driven, before any forced refresh

    // Both tabs refresh at the same instant, three times: one presents the token, the other waits
    // for the lock and takes the new session from the storage.
    for (let i = 0; i < 3; i++) {
      const [ra, rb] = await Promise.all([a, b].map((p) => p.evaluate(async () => (await (globalThis as unknown as Tab).plinth.auth.refresh())?.refresh_token)));
      expect(ra).toEqual(expect.any(String));
      expect(ra).toBe(rb);
    }
    const seen = refreshes();
    expect(seen.map((r) => r.status)).toEqual(seen.map(() => 200));
    // One tab refreshes at a time and shares the result: every refresh token is presented once.
    expect(new Set(seen.map((r) => r.token)).size).toBe(seen.length);

    // Both tabs hold the newest session.
    const [ta, tb] = await Promise.all([a, b].map((p) => p.evaluate(async () => (await (globalThis as unknown as Tab).plinth.auth.session())?.refresh_token)));
    expect(ta).toBe(tb);
    const last = rig.proxy.log.filter((x) => x.path.endsWith('/auth/refresh')).pop()!;
    expect(ta).toBe((JSON.parse(last.responseBody) as { refresh_token: string }).refresh_token);

    // Sign out in tab A: tab B is signed out too, without a request of its own.
    await a.evaluate(async () => (globalThis as unknown as Tab).plinth.auth.signOut());
    await b.waitForFunction(() => (globalThis as unknown as Tab).events.includes('signed_out'));
    expect(await b.evaluate(() => (globalThis as unknown as Tab).plinth.auth.currentUser)).toBeNull();
    expect(await b.evaluate(async () => (globalThis as unknown as Tab).plinth.auth.session())).toBeNull();
    const denied = await b.evaluate(async () =>
      (globalThis as unknown as Tab).plinth
        .collection('tab_notes')
        .list()
        .then(
          () => null,
          (e: { status: number; code: string }) => ({ status: e.status, code: e.code }),
        ),
    );
    expect(denied).toEqual({ status: 403, code: 'forbidden' });
    // And the server agrees: the session's refresh token is dead.
    const res = await fetch(`${f.url}/v1/projects/${f.project}/auth/refresh`, {
      method: 'POST',
      headers: { authorization: `Bearer ${f.pk}`, 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: ta }),
    });
    expect(res.status).toBe(401);
    await a.close();
    await b.close();
  }, 90_000);

  it('without Web Locks, tabs refreshing at once get one session through the server\'s 10 s reuse window', async () => {
    const c = await open('?nolocks');
    const d = await open('?nolocks');
    expect(await c.evaluate(() => (globalThis as unknown as { navigator: { locks?: unknown } }).navigator.locks === undefined)).toBe(true);
    const before = refreshes().length;
    await c.evaluate(async ([e, p]) => (globalThis as unknown as Tab).plinth.auth.signIn(e, p), [EMAIL, PASSWORD] as const);
    for (let i = 0; i < 3; i++) {
      const [rc, rd] = await Promise.all([c, d].map((p) => p.evaluate(async () => (await (globalThis as unknown as Tab).plinth.auth.refresh())?.refresh_token)));
      expect(rc).toEqual(expect.any(String));
      expect(rc).toBe(rd);
    }
    const seen = refreshes().slice(before);
    expect(seen.map((r) => r.status)).toEqual(seen.map(() => 200));
    // A token presented twice is only ever presented again within the reuse (globalThis as unknown as Tab).
    for (const r of seen) {
      const first = seen.find((x) => x.token === r.token)!;
      expect(r.at - first.at).toBeLessThan(10_000);
    }
    for (const p of [c, d]) expect(await p.evaluate(async () => (await (globalThis as unknown as Tab).plinth.auth.user())?.email)).toBe(EMAIL);
    await d.evaluate(async () => (globalThis as unknown as Tab).plinth.auth.signOut());
    await c.waitForFunction(() => (globalThis as unknown as Tab).events.includes('signed_out'));
    expect(await c.evaluate(async () => (globalThis as unknown as Tab).plinth.auth.session())).toBeNull();
    await c.close();
    await d.close();
  }, 60_000);

  it("realtime over the browser's own WebSocket: one tab's subscription sees the other tab's writes", async () => {
    const e = await open();
    const g = await open();
    const uid = await e.evaluate(async ([m, p]) => (await (globalThis as unknown as Tab).plinth.auth.signIn(m, p)).user.id, [EMAIL, PASSWORD] as const);
    await e.evaluate((url) => {
      const tab = globalThis as unknown as Tab;
      tab.live = [];
      tab.enableRealtime(url);
      tab.plinth
        .collection<{ owner: string; body?: string }>('tab_notes')
        .where('body', '==', 'live in the browser')
        .subscribe((ev) => tab.live!.push({ kind: ev.kind, body: ev.kind === 'create' ? ev.record.body : undefined }), { snapshot: true });
    }, f.url); // WebSockets go straight to the gateway (?key= with the public key)
    await e.waitForFunction(() => (globalThis as unknown as Tab).live!.length === 1);
    await g.evaluate(
      async (owner) => (globalThis as unknown as Tab).plinth.collection('tab_notes').create({ owner, body: 'live in the browser' }),
      uid,
    );
    await e.waitForFunction(() => (globalThis as unknown as Tab).live!.length === 2);
    expect(await e.evaluate(() => (globalThis as unknown as Tab).live)).toEqual([{ kind: 'snapshot' }, { kind: 'create', body: 'live in the browser' }]);
    await e.evaluate(async () => (globalThis as unknown as Tab).plinth.auth.signOut());
  }, 60_000);
});

