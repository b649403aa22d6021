import { benchAuthFlows } from './auth-flows';
import { benchBatchWrites } from './batch-writes';
import { benchFiles } from './files';
import { benchOverload } from './overload';
import { benchQueryOverload } from './query-overload';
import { benchRealtime } from './realtime';
import { benchRecordCounts } from './record-counts';
import { benchRecordSearch } from './record-search';
import { benchRecords } from './records';
import { benchRelations } from './relations';
import { benchWebhookDelivery } from './webhook-delivery';

/**
 * `npm run bench`: every benchmark scenario in one run, printed as tables with ratios. Figures
 * from one run are comparable with each other; absolute numbers depend on the machine.
 * BENCH_SECONDS sets the duration of each load (default 5).
 */
const SCENARIOS: Array<[string, () => Promise<string>]> = [
  ['records', benchRecords],
  ['record-counts', benchRecordCounts],
  ['relations', benchRelations],
  ['record-search', benchRecordSearch],
  ['batch-writes', benchBatchWrites],
  ['auth-flows', benchAuthFlows],
  ['overload', benchOverload],
  ['realtime', benchRealtime],
  ['query-overload', benchQueryOverload],
  ['files', benchFiles],
  ['webhook-delivery', benchWebhookDelivery],
];

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  for (const [name, run] of SCENARIOS) {
    if (only.length > 0 && !only.includes(name)) continue;
    process.stdout.write(`${await run()}\n\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
