/** `plinth collections …` (secret key). */
import { UsageError, printJson, type CliIo, type Connection } from '../client';
import type { Flags } from '../flags';
import { need, readJsonFile } from './args';

export async function collectionsCommand(args: string[], _flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const [verb, arg] = args;
  const c = (name: string) => conn.projectPath(`/collections/${encodeURIComponent(name)}`);
  switch (verb) {
    case 'list':
      printJson(io, await conn.ok('GET', conn.projectPath('/collections'), { key: conn.requireSecretKey() }));
      return 0;
    case 'show':
      printJson(io, await conn.ok('GET', c(need(arg, 'collection name')), { key: conn.requireSecretKey() }));
      return 0;
    case 'create': {
      const body = definition(readJsonFile(need(arg, 'JSON file with {"name", "fields", "rules"?}')));
      printJson(io, await conn.ok('POST', conn.projectPath('/collections'), { key: conn.requireSecretKey(), body }));
      return 0;
    }
    case 'delete':
      printJson(io, await conn.ok('DELETE', c(need(arg, 'collection name')), { key: conn.requireSecretKey() }));
      return 0;
    default:
      throw new UsageError(verb ? `unknown command: collections ${verb}` : 'missing subcommand: collections list|show|create|delete');
  }
}

/**
 * The definition to create from a file: {name, fields, rules?}, also as `collections show`
 * prints it ({"collection": {…}}), whose revision and timestamps belong to the old collection.
 */
function definition(file: unknown): { [k: string]: unknown } {
  const isObject = (v: unknown): v is { [k: string]: unknown } => typeof v === 'object' && v !== null && !Array.isArray(v);
  const def = isObject(file) && isObject(file.collection) ? file.collection : file;
  if (!isObject(def)) throw new UsageError('the file must hold a JSON object {"name", "fields", "rules"?}');
  const { name, fields, rules } = def;
  return { name, fields, ...(rules !== undefined ? { rules } : {}) };
}
