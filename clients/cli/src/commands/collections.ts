/** `plinth collections …` (secret key, `@plinth/client/admin`). */
import type { AdminClient } from '@plinth/client/admin';
import { UsageError, printJson, type CliIo, type Connection } from '../client';
import type { Flags } from '../flags';
import { need, readJsonFile } from './args';

type CollectionDefinition = Parameters<AdminClient['collections']['create']>[0];

export async function collectionsCommand(args: string[], _flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const [verb, arg] = args;
  switch (verb) {
    case 'list':
      printJson(io, { collections: await conn.admin().collections.list() });
      return 0;
    case 'show':
      printJson(io, { collection: await conn.admin().collections.get(need(arg, 'collection name')) });
      return 0;
    case 'create': {
      const def = definition(readJsonFile(need(arg, 'JSON file with {"name", "fields", "rules"?}')));
      printJson(io, { collection: await conn.admin().collections.create(def) });
      return 0;
    }
    case 'delete': {
      const name = need(arg, 'collection name');
      await conn.admin().collections.delete(name);
      printJson(io, { deleted: true, name });
      return 0;
    }
    default:
      throw new UsageError(verb ? `unknown command: collections ${verb}` : 'missing subcommand: collections list|show|create|delete');
  }
}

/**
 * The definition to create from a file: {name, fields, rules?}, also as `collections show`
 * prints it ({"collection": {…}}), whose revision and timestamps belong to the old collection.
 */
function definition(file: unknown): CollectionDefinition {
  const isObject = (v: unknown): v is { [k: string]: unknown } => typeof v === 'object' && v !== null && !Array.isArray(v);
  const def = isObject(file) && isObject(file.collection) ? file.collection : file;
  if (!isObject(def)) throw new UsageError('the file must hold a JSON object {"name", "fields", "rules"?}');
  // Sent as the file has it: the server judges the definition and answers what is wrong.
  const { name, fields, rules } = def as unknown as CollectionDefinition;
  return { name, fields, ...(rules !== undefined ? { rules } : {}) };
}
