/**
 * `plinth backup` next to a running standalone server under sustained writes, then `plinth
 * restore` into a new data directory and a second server started on it: every record whose
 * create was acknowledged before the backup began is there and served, every database passes
 * SQLite's integrity check, and the copy is one snapshot (exactly the rows the manifest counted).
 * Real processes: the server (gateway/dist/standalone.js) and the CLI (clients/cli/bin/plinth.js).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { startStandalone, stopStandalone, type StandaloneProcess } from '@plinth/testing/standalone-process';

const CLI = path.resolve(__dirname, '../../clients/cli/bin/plinth.js');
const WRITERS = 16;
const WRITE_MS = 1500;

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

async function plinth(...args: string[]): Promise<CliRun> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('plinth backup while the server takes writes, then plinth restore', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-backup-online-'));
  const dataDir = path.join(root, 'data');
  const backupDir = path.join(root, 'backup');
  const restoredDir = path.join(root, 'restored');
  const servers: StandaloneProcess[] = [];
  afterAll(async () => {
    for (const s of servers) await stopStandalone(s, 'SIGKILL');
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('restores every acknowledged write from before the backup, passes the integrity check, and the restored server serves them', async () => {
    const env = { PLINTH_RATE_LIMIT_SECRET_KEY: '10000000' };
    const live = await startStandalone(dataDir, env);
    servers.push(live);
    const api = (base: string, p: string, init: { method?: string; body?: unknown } = {}) =>
      fetch(`${base}/v1/projects/demo${p}`, {
        method: init.method ?? 'GET',
        headers: { Authorization: `Bearer ${live.secretKey}`, 'Content-Type': 'application/json' },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
    const created = await api(live.url, '/collections', { method: 'POST', body: { name: 'backup_notes', fields: { n: { type: 'integer' } } } });
    expect(created.status).toBe(201);

    // Writers: each creates records one after another until told to stop; every 201 is recorded.
    const acked: string[] = [];
    let refused = 0;
    let writing = true;
    let n = 0;
    const writer = async () => {
      while (writing) {
        const res = await api(live.url, '/collections/backup_notes/records', { method: 'POST', body: { data: { n: n++ } } });
        if (res.status === 201) acked.push(((await res.json()) as { record: { id: string } }).record.id);
        else {
          refused++;
          await res.arrayBuffer();
        }
      }
    };
    const started = Date.now();
    const writers = Array.from({ length: WRITERS }, writer);
    await sleep(WRITE_MS);
    const ackedBefore = [...acked];
    const backupStarted = Date.now();
    const backup = await plinth('backup', backupDir, '--data-dir', dataDir);
    const backupMs = Date.now() - backupStarted;
    const ackedByBackupEnd = acked.length;
    await sleep(300);
    writing = false;
    await Promise.all(writers);
    const seconds = (Date.now() - started) / 1000;
    // The rate this machine reached (reported, never asserted).
    process.stdout.write(
      `backup under load: ${acked.length} creates in ${seconds.toFixed(1)} s = ${Math.round(acked.length / seconds)}/s; ` +
        `${ackedBefore.length} acknowledged before the backup began, ${ackedByBackupEnd - ackedBefore.length} while it ran (${backupMs} ms)\n`,
    );

    expect(backup).toMatchObject({ code: 0, stderr: '' });
    expect(refused).toBe(0);
    // The server went on acknowledging writes while the backup ran.
    expect(ackedByBackupEnd - ackedBefore.length).toBeGreaterThan(0);
    const manifest = JSON.parse(backup.stdout) as { files: Array<{ path: string; kind: string; tables?: Record<string, number> }> };
    expect(manifest.files.map((f) => f.path)).toEqual(expect.arrayContaining(['auth.db', 'credentials.json', 'gateway.db', 'limits.db', 'mailer.db', 'records.db']));
    expect(fs.existsSync(path.join(backupDir, 'manifest.json'))).toBe(true);

    const restore = await plinth('restore', backupDir, '--data-dir', restoredDir);
    expect(restore).toMatchObject({ code: 0, stderr: '' });
    for (const f of manifest.files.filter((x) => x.kind === 'sqlite')) {
      const db = new Database(path.join(restoredDir, f.path), { readonly: true });
      expect([f.path, db.pragma('integrity_check', { simple: true })]).toEqual([f.path, 'ok']);
      db.close();
    }

    // The restored server (its own process, on the restored directory) serves every record.
    const restored = await startStandalone(restoredDir, env);
    servers.push(restored);
    expect(restored.secretKey).toBe(live.secretKey);
    const served = new Set<string>();
    let cursor: string | null = null;
    do {
      const q: string = `?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await api(restored.url, `/collections/backup_notes/records${q}`);
      expect(res.status).toBe(200);
      const page = (await res.json()) as { records: Array<{ id: string }>; cursor: string | null };
      for (const r of page.records) served.add(r.id);
      cursor = page.cursor;
    } while (cursor);
    const missing = ackedBefore.filter((id) => !served.has(id));
    expect(missing).toEqual([]);
    // One snapshot: exactly what the manifest counted, and nothing acknowledged after the backup ended.
    const records = manifest.files.find((f) => f.path === 'records.db')!;
    const rows = records.tables!['rec_demo_backup_notes'];
    expect(served.size).toBe(rows);
    expect(served.size).toBeGreaterThanOrEqual(ackedBefore.length);
    expect(acked.slice(ackedByBackupEnd).filter((id) => served.has(id))).toEqual([]);
  }, 120_000);
});
