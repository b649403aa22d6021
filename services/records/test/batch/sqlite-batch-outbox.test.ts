/**
 * With the outbox (standalone: the event log is a table of records.db), a batch appends one event
 * per changed record inside its own transaction — in one run of positions — and a refused batch
 * appends none (docs/records.md "Batch writes", docs/architecture.md "The outbox").
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqlite } from '@plinth/shared';
import { SqliteRecordStore } from '../../src/store/sqlite/sqlite-record-store';
import { batchService, user } from './batch.contract';

it('a batch writes its events in its transaction, one per record, in one run of positions; a refused one writes none', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-batch-outbox-'));
  try {
    const file = path.join(dir, 'records.db');
    const store = SqliteRecordStore.open(file, { outbox: true });
    const svc = await batchService(store);
    const db = openSqlite(file);
    const events = () => db.prepare("SELECT seq, collection FROM events WHERE collection != '' ORDER BY seq").all() as Array<{ seq: number; collection: string }>;
    const before = events().length;
    const operations = Array.from({ length: 10 }, (_, i) => ({ op: 'create', collection: i % 2 ? 'tags' : 'notes', data: i % 2 ? { label: `t${i}` } : { owner: 'alice' } }));
    await svc.batch.run(user('alice'), { operations }, undefined);
    const written = events().slice(before);
    expect(written.map((e) => e.collection)).toEqual(operations.map((o) => o.collection));
    expect(written[written.length - 1]!.seq - written[0]!.seq).toBe(9);
    await expect(svc.batch.run(user('alice'), { operations: [...operations, { op: 'create', collection: 'notes', data: { owner: 'bob' } }] }, undefined)).rejects.toMatchObject({ status: 403 });
    expect(events().length).toBe(before + 10);
    db.close();
    await store.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
