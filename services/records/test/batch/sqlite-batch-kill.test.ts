/**
 * A batch under SIGKILL (docs/records.md "Batch writes"): a process writing 100-create batches
 * into a SQLite file is killed at a random moment, many times; after each restart every batch is
 * either wholly there or not at all, and every batch it reported committed is there.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { asProjectId, type Collection } from '@plinth/shared';
import { SqliteRecordStore } from '../../src/store/sqlite/sqlite-record-store';

const PROJECT = asProjectId('killed');
const WRITER = path.join(__dirname, 'support/batch-writer.js');
let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-batch-kill-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const def = (name: string): Collection => ({ name, fields: { batch: { type: 'integer' }, body: { type: 'text' } }, rules: {}, revision: 1, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' });

/** Runs the writer until it has committed `batches` batches (plus a random extra moment), then SIGKILLs it. */
function runAndKill(file: string, batches: number, extraMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let committed = -1;
    let stderr = '';
    let armed = false;
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      for (const line of d.toString().split('\n')) if (line) committed = Number(line);
      if (!armed && committed + 1 >= batches) {
        armed = true;
        setTimeout(() => child.kill('SIGKILL'), extraMs);
      }
    });
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve(committed) : reject(new Error(`writer exited ${code}: ${stderr}`))));
  });
}

it('after a SIGKILL at any moment, each batch is all there or not at all', async () => {
  const file = path.join(dir, 'records.db');
  const setup = SqliteRecordStore.open(file);
  for (const name of ['left', 'right']) await setup.createCollection(PROJECT, def(name));
  await setup.close();
  let lastReported = -1;
  for (const extraMs of [0, 3, 7, 11, 17]) {
    const reported = await runAndKill(file, 2, extraMs);
    const store = SqliteRecordStore.open(file);
    const counts = new Map<number, number>();
    for (const name of ['left', 'right']) {
      const rows = await store.queryRecords(PROJECT, def(name), { predicate: true, orderBy: 'id', direction: 'asc', limit: 100_000 });
      for (const r of rows) counts.set(r.batch as number, (counts.get(r.batch as number) ?? 0) + 1);
    }
    await store.close();
    // Batch numbers restart at 0 in every run: a run's batch n adds 100 more records labelled n.
    for (const [n, count] of counts) expect([n, count % 100]).toEqual([n, 0]);
    expect(counts.get(reported) ?? 0).toBeGreaterThanOrEqual(100);
    lastReported = reported;
  }
  expect(lastReported).toBeGreaterThanOrEqual(1);
});
