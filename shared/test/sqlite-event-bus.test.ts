import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteEventBus, asProjectId } from '@plinth/shared';
import { describeEventBusContract } from './event-bus-contract';

describeEventBusContract('SQLite event log', async (retention) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-events-'));
  const file = path.join(dir, 'events.db');
  const bus = new SqliteEventBus({ file, retention, pollMs: 10 });
  return {
    bus,
    reopen: async () => new SqliteEventBus({ file, retention, pollMs: 10 }),
    cleanUp: async () => {
      await bus.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('SQLite event log: appends in groups', () => {
  it('events published in one turn of the event loop get consecutive seqs in publish order, seen so by another process', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-events-'));
    const file = path.join(dir, 'events.db');
    const writer = new SqliteEventBus({ file, pollMs: 10 });
    const reader = new SqliteEventBus({ file, pollMs: 10 });
    try {
      const project = asProjectId('grouped');
      const seqs = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          writer.publish({ project, collection: 'c', kind: 'create', record: { id: `r${i}`, version: 1, created_at: 'x', updated_at: 'x' }, committed_at: Date.now() }),
        ),
      );
      expect(seqs).toEqual(Array.from({ length: 50 }, (_, i) => seqs[0]! + i));
      const page = await reader.read(project, 0);
      expect(page.events.map((e) => [e.seq, e.record?.id])).toEqual(seqs.map((s, i) => [s, `r${i}`]));
    } finally {
      await writer.close();
      await reader.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an event published just before close is still appended', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-events-'));
    const file = path.join(dir, 'events.db');
    const writer = new SqliteEventBus({ file });
    const project = asProjectId('closing');
    const published = writer.publish({ project, collection: 'c', kind: 'collection', revision: null, committed_at: Date.now() });
    await writer.close();
    await expect(published).resolves.toBeGreaterThan(0);
    const reader = new SqliteEventBus({ file });
    try {
      expect((await reader.read(project, 0)).events).toHaveLength(1);
    } finally {
      await reader.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
