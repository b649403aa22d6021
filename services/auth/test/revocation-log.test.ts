import { asProjectId, openSqlite } from '@plinth/shared';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { MongoRevocationLog } from '../src/store/mongo-revocation-log';
import type { RevocationLog, RevokedSession } from '../src/store/revocation-log';
import { SqliteRevocationLog } from '../src/store/sqlite-revocation-log';

const P = asProjectId('proj-one');
const Q = asProjectId('proj-two');
const T0 = Date.UTC(2030, 0, 1);

/** The guarantees of the RevocationLog port, for each adapter. */
function describeRevocationLog(name: string, open: () => Promise<RevocationLog>): void {
  describe(`RevocationLog: ${name}`, () => {
    let log: RevocationLog;
    beforeEach(async () => (log = await open()));

    it('returns what was recorded since a time, oldest first, keeping a session\'s earliest time', async () => {
      await log.record([{ project: P, sid: 'ses_b', at: T0 + 20 }, { project: Q, sid: 'ses_a', at: T0 + 10 }]);
      await log.record([{ project: P, sid: 'ses_b', at: T0 + 99 }, { project: P, sid: 'ses_old', at: T0 - 5 }]);
      expect(await log.since(T0, 10)).toEqual([
        { project: Q, sid: 'ses_a', at: T0 + 10 },
        { project: P, sid: 'ses_b', at: T0 + 20 },
      ]);
    });

    it('pages through entries of the same time without losing or repeating one', async () => {
      const entries: RevokedSession[] = Array.from({ length: 7 }, (_, i) => ({ project: i % 2 ? P : Q, sid: `ses_${i}`, at: T0 + (i < 5 ? 0 : 1) }));
      await log.record(entries);
      const seen: RevokedSession[] = [];
      let page = await log.since(T0, 3);
      while (page.length > 0) {
        seen.push(...page);
        page = await log.since(T0, 3, page[page.length - 1]);
      }
      expect(seen.map((e) => e.sid).sort()).toEqual(entries.map((e) => e.sid).sort());
      expect(seen).toHaveLength(7);
    });

    it('prune forgets entries older than the cutoff', async () => {
      await log.record([{ project: P, sid: 'ses_1', at: T0 }, { project: P, sid: 'ses_2', at: T0 + 100 }]);
      await log.prune(T0 + 50);
      expect((await log.since(0, 10)).map((e) => e.sid)).toEqual(['ses_2']);
    });
  });
}

describeRevocationLog('sqlite', async () => new SqliteRevocationLog(openSqlite(':memory:')));
describeRevocationLog('mongo (mingo stand-in)', async () => MongoRevocationLog.open(createMingoDb()));
