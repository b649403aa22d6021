/**
 * The event is part of the write (docs/architecture.md "The outbox"): 20 SIGKILLs of standalone
 * workers while both take creates (each retried with its Idempotency-Key until answered, as a
 * client does). Afterwards every stored record — acknowledged or not — has exactly one create
 * event in the log, so no acknowledged change lacks its event: not a write killed between its
 * commit and its event, nor its retry answered from the idempotency key.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { freePort } from '@plinth/testing/free-port';
import { freshRequest, startStandalone, stopStandalone, type StandaloneProcess } from '@plinth/testing/standalone-process';

const KILLS = 20;
const WRITERS = 8;

let s: StandaloneProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-outbox-kill-'));
  // A fixed port: a replacement worker listens on it again even when both workers were killed.
  s = await startStandalone(dataDir, { PLINTH_WORKERS: '2', PORT: String(await freePort()) });
}, 60_000);

afterAll(async () => {
  if (s) await stopStandalone(s);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

function workerPids(): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(s.child.pid)], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The create events of `collection` in the event log, by record id (the log file, read directly). */
function createEvents(collection: string): Map<string, number> {
  // The log lives in records.db (the outbox); a build without it kept it in events.db.
  const inRecords = new Database(path.join(dataDir, 'records.db'), { readonly: true });
  const hasOutbox = inRecords.prepare("SELECT 1 FROM sqlite_master WHERE name = 'events'").get() !== undefined;
  const db = hasOutbox ? inRecords : new Database(path.join(dataDir, 'events.db'), { readonly: true });
  const rows = db.prepare("SELECT payload FROM events WHERE project = 'demo' AND collection = ?").all(collection) as { payload: string }[];
  inRecords.close();
  if (db !== inRecords) db.close();
  const counts = new Map<string, number>();
  for (const { payload } of rows) {
    const e = JSON.parse(payload) as { kind: string; record: { id: string } };
    if (e.kind === 'create') counts.set(e.record.id, (counts.get(e.record.id) ?? 0) + 1);
  }
  return counts;
}

it(`${KILLS} SIGKILLs of workers under creates: every stored record has exactly one create event, every acknowledged one too`, async () => {
  const api = `${s.url}/v1/projects/demo/collections`;
  const headers = { Authorization: `Bearer ${s.secretKey}` };
  expect((await freshRequest(api, { method: 'POST', headers, body: { name: 'outbox_kill', fields: { n: { type: 'number' } } } })).status).toBe(201);
  expect(workerPids()).toHaveLength(2);

  const acknowledged = new Set<string>();
  let stop = false;
  let next = 0;
  const write = async (n: number): Promise<void> => {
    let last: unknown = null;
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await freshRequest(`${api}/outbox_kill/records`, {
          method: 'POST',
          headers: { ...headers, 'Idempotency-Key': `k-${n}` },
          body: { data: { n } },
          timeoutMs: 3000,
        });
        if (res.status === 201) {
          acknowledged.add((res.body as { record: { id: string } }).record.id);
          return;
        }
        last = res;
      } catch (err) {
        last = String(err);
        // The worker died with the request: retry it with the same key.
      }
      if (attempt > 600) throw new Error(`write ${n} never answered: ${JSON.stringify(last)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  // About 200 creates a second in all: each writer starts one every WRITERS × 5 ms.
  const writers = Array.from({ length: WRITERS }, async () => {
    while (!stop) {
      const started = Date.now();
      await write(next++);
      await new Promise((r) => setTimeout(r, Math.max(0, WRITERS * 5 - (Date.now() - started))));
    }
  });
  for (let kill = 0; kill < KILLS; kill++) {
    // Let writes flow (at least a few acknowledged since the last kill), then kill a worker.
    const seen = acknowledged.size;
    for (let i = 0; acknowledged.size < seen + 5 && i < 2000; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50 + Math.floor(Math.random() * 150)));
    const pids = workerPids();
    if (pids.length > 0) process.kill(pids[kill % pids.length]!, 'SIGKILL');
  }
  stop = true;
  await Promise.all(writers);

  const records = new Database(path.join(dataDir, 'records.db'), { readonly: true });
  const stored = (records.prepare('SELECT id FROM "rec_demo_outbox_kill"').all() as { id: string }[]).map((r) => r.id);
  records.close();
  expect(stored).toHaveLength(next);
  const events = createEvents('outbox_kill');
  const withoutEvent = stored.filter((id) => events.get(id) !== 1);
  const acknowledgedWithout = [...acknowledged].filter((id) => events.get(id) !== 1);
  expect({ withoutEvent, acknowledgedWithout, eventsOfNoRecord: events.size - stored.length }).toEqual({
    withoutEvent: [],
    acknowledgedWithout: [],
    eventsOfNoRecord: 0,
  });
  expect(acknowledged.size).toBe(next);
}, 180_000);
