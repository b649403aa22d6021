import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteEventBus } from '@plinth/shared';
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
