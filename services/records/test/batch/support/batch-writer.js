// Child process of sqlite-batch-kill.test.ts: opens the records database at argv[2] and writes
// batches of 100 creates, labelled with the batch number, forever; prints each number once its
// batch is committed. The test SIGKILLs it at a moment of its choosing.
const path = require('node:path');
const dist = path.resolve(__dirname, '../../../dist');
const { SqliteRecordStore } = require(path.join(dist, 'store/sqlite/sqlite-record-store.js'));
const { createRulesPolicy } = require(path.join(dist, 'rules/index.js'));
const { CollectionOperations } = require(path.join(dist, 'operations/collection-operations.js'));
const { BatchOperations } = require(path.join(dist, 'operations/batch-operations.js'));

async function main() {
  const store = SqliteRecordStore.open(process.argv[2]);
  const policy = createRulesPolicy();
  const collections = new CollectionOperations(store, policy);
  const batch = new BatchOperations(store, policy, collections);
  const caller = { project: 'killed', keyKind: 'secret', auth: null };
  const body = 'x'.repeat(2000);
  for (let n = 0; ; n++) {
    const operations = Array.from({ length: 100 }, (_, i) => ({ op: 'create', collection: i % 2 ? 'left' : 'right', data: { batch: n, body } }));
    await batch.run(caller, { operations }, undefined);
    process.stdout.write(`${n}\n`);
  }
}
main().catch((err) => {
  process.stderr.write(String(err && err.stack));
  process.exit(1);
});
