/**
 * `plinth records …` (secret key, `@plinth/client/admin`): list, get, export to NDJSON, import NDJSON.
 *
 * Import sends lines that carry the system fields (an export) to `POST …/records:import`, which
 * keeps their id, version and timestamps and skips ids already stored; a line without `id` is
 * created with `POST …/records` and an Idempotency-Key derived from the collection and the
 * line, so running the same import twice creates nothing the second time (a replayed create
 * counts as existing).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { UsageError, printJson, type CliIo, type Connection } from '../client';
import type { Flags } from '../flags';
import { need, positiveInt } from './args';

type Json = { [k: string]: unknown };
const SYSTEM = ['id', 'version', 'created_at', 'updated_at'];
/** Records per `records:import` request (the server takes at most 1000, bodies up to 1 MB). */
const BATCH = 200;
const BATCH_BYTES = 512 * 1024;

async function readInput(file: string, io: CliIo): Promise<string> {
  if (file !== '-') {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }
  let text = '';
  for await (const chunk of io.stdin ?? process.stdin) text += chunk.toString();
  return text;
}

export async function recordsCommand(args: string[], flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const [verb, collection, arg] = args;
  switch (verb) {
    case 'list': {
      const name = need(collection, 'collection name');
      const limit = positiveInt(flags.limit, '--limit');
      // --where goes as the JSON text given: the server judges it (400 with what is wrong).
      const query = { where: flags.where, orderBy: flags['order-by'], direction: flags.direction, limit, cursor: flags.cursor };
      printJson(io, await conn.admin().records.list(name, query));
      return 0;
    }
    case 'get': {
      const name = need(collection, 'collection name');
      printJson(io, { record: await conn.admin().records.get(name, need(arg, 'record id')) });
      return 0;
    }
    case 'export':
      return exportRecords(need(collection, 'collection name'), flags.out, conn, io);
    case 'import':
      return importRecords(need(collection, 'collection name'), need(arg, 'NDJSON file (or - for stdin)'), conn, io);
    default:
      throw new UsageError(verb ? `unknown command: records ${verb}` : 'missing subcommand: records list|get|export|import');
  }
}

async function exportRecords(collection: string, out: string | undefined, conn: Connection, io: CliIo): Promise<number> {
  const lines: string[] = [];
  for await (const r of conn.admin().records.export(collection)) lines.push(JSON.stringify(r));
  const text = lines.map((l) => `${l}\n`).join('');
  if (out && out !== '-') {
    fs.writeFileSync(out, text);
    io.err.write(`exported ${lines.length} record(s) of ${collection} to ${out}\n`);
  } else {
    io.out.write(text);
  }
  return 0;
}

async function importRecords(collection: string, file: string, conn: Connection, io: CliIo): Promise<number> {
  const admin = conn.admin();
  const whole: Json[] = [];
  const fresh: Array<{ line: string; record: Json }> = [];
  const text = await readInput(file, io);
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      throw new UsageError(`${file}:${i + 1}: not a JSON object`);
    }
    if (typeof record !== 'object' || record === null || Array.isArray(record)) throw new UsageError(`${file}:${i + 1}: not a JSON object`);
    if ('id' in record) whole.push(record as Json);
    else fresh.push({ line, record: record as Json });
  });

  const totals = { imported: 0, existing: 0 };
  let batch: Json[] = [];
  let bytes = 0;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const r = await admin.records.import(collection, batch);
    totals.imported += r.imported;
    totals.existing += r.existing;
    batch = [];
    bytes = 0;
  };
  for (const r of whole) {
    const size = JSON.stringify(r).length;
    if (batch.length >= BATCH || bytes + size > BATCH_BYTES) await flush();
    batch.push(r);
    bytes += size;
  }
  await flush();

  for (const { line, record } of fresh) {
    const data: Json = {};
    for (const [k, v] of Object.entries(record)) if (!SYSTEM.includes(k)) data[k] = v;
    const idem = `import-${createHash('sha256').update(`${collection}\n${line}`).digest('hex').slice(0, 48)}`;
    const { replayed } = await admin.records.create(collection, data, { idempotencyKey: idem });
    if (replayed) totals.existing++;
    else totals.imported++;
  }
  printJson(io, totals);
  return 0;
}
