/**
 * `plinth types [--out FILE]`: TypeScript types for the project's collections, read from
 * `GET /collections` (secret key, through `@plinth/client/admin`). One interface per collection
 * — the system fields, then the user fields typed by field type (a relation as a record id, a
 * file field as its files' metadata), optional unless `required` — and a `Collections` map from
 * collection name to record type, for `createClient<Collections>(…)` of `@plinth/client`.
 *
 * The file imports nothing (it declares its own `JsonValue`), so it compiles with any SDK
 * version; it holds no date, so regenerating an unchanged project rewrites the same bytes.
 */
import fs from 'node:fs';
import { CliError, UsageError, type CliIo, type Connection } from '../client';
import type { Flags } from '../flags';

/** A field definition as `GET /collections` lists it; `type` may be one this CLI predates. */
export interface LiveField {
  type: string;
  required?: boolean;
  /** A list's item definition, should the server ever declare one. */
  items?: { type: string };
  /** A relation's target collection. */
  collection?: string;
  /** A relation holding a list of ids (above 1), or the most files a `files` field holds. */
  max_items?: number;
}
export interface LiveCollection {
  name: string;
  fields: { [field: string]: LiveField };
}

const SCALARS: Readonly<Record<string, string>> = {
  text: 'string',
  number: 'number',
  integer: 'number',
  boolean: 'boolean',
  timestamp: 'string',
  json: 'JsonValue',
};

/** What a list holds today: strings, numbers and booleans (docs/records.md, field types). */
const LIST_ITEM = 'string | number | boolean';

/** The TypeScript type of a field; a type this CLI does not know is `unknown`. */
export function fieldType(def: LiveField): string {
  if (def.type === 'list') {
    const item = def.items && SCALARS[def.items.type];
    return `Array<${item ?? LIST_ITEM}>`;
  }
  // a relation holds the id of a record of its collection, or a list of ids (max_items above 1)
  if (def.type === 'relation') return (def.max_items ?? 1) > 1 ? 'RecordId[]' : 'RecordId';
  if (def.type === 'file') return 'FileMeta';
  if (def.type === 'files') return 'FileMeta[]';
  return SCALARS[def.type] ?? 'unknown';
}

const KNOWN = new Set([...Object.keys(SCALARS), 'list', 'relation', 'file', 'files']);

/** The comment after a field: where a relation points, or that its type is unknown here. */
function fieldNote(def: LiveField): string {
  if (!KNOWN.has(def.type)) return ` // "${def.type}": a field type this version of plinth does not know`;
  if (def.type === 'relation' && def.collection) return ` // → "${def.collection}"`;
  return '';
}

/** `todo_items` → `TodoItemsRecord`. */
function interfaceName(collection: string): string {
  const pascal = collection
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
  return `${/^[A-Za-z_]/.test(pascal) ? pascal : `C${pascal}`}Record`;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const key = (name: string): string => (IDENTIFIER.test(name) ? name : JSON.stringify(name));

/** The generated file's text for `collections` of `project`. */
export function renderTypes(project: string, collections: readonly LiveCollection[]): string {
  const sorted = [...collections].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const used = new Set<string>(['JsonValue', 'RecordId', 'FileMeta', 'Collections']);
  const names = new Map<string, string>();
  for (const c of sorted) {
    let name = interfaceName(c.name);
    for (let n = 2; used.has(name); n++) name = `${interfaceName(c.name)}${n}`;
    used.add(name);
    names.set(c.name, name);
  }

  const out: string[] = [
    `// Types of the collections of Plinth project "${project}", written by \`plinth types\`.`,
    '// Do not edit: run `plinth types` again after changing a collection.',
    '',
    '/** A JSON value, as a `json` field holds. */',
    'export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };',
    '',
    '/** The id of a record, as a `relation` field holds it (`expand` reads the record itself). */',
    'export type RecordId = string;',
    '',
    '/** What a `file` field holds for its file (a `files` field: a list of these); the bytes are downloaded apart. */',
    'export interface FileMeta {',
    '  /** The generated name it is stored and downloaded under. */',
    '  name: string;',
    '  /** The name the uploader gave, for display only. */',
    '  original_name: string;',
    '  /** In bytes. */',
    '  size: number;',
    '  /** The media type detected from the bytes. */',
    '  type: string;',
    '  sha256: string;',
    '  created_at: string;',
    '}',
  ];
  for (const c of sorted) {
    out.push('', `/** A record of "${c.name}". */`, `export interface ${names.get(c.name)!} {`);
    out.push('  id: string;', '  version: number;', '  created_at: string;', '  updated_at: string;');
    for (const [field, def] of Object.entries(c.fields)) {
      out.push(`  ${key(field)}${def.required ? '' : '?'}: ${fieldType(def)};${fieldNote(def)}`);
    }
    out.push('}');
  }
  out.push('', '/** Collection name → record type: `createClient<Collections>(…)` of @plinth/client. */', 'export interface Collections {');
  for (const c of sorted) out.push(`  ${key(c.name)}: ${names.get(c.name)!};`);
  out.push('}', '');
  return out.join('\n');
}

export async function typesCommand(args: string[], flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  if (args.length > 0) throw new UsageError(`unexpected argument "${args[0]}": the file is given with --out FILE`);
  const collections: LiveCollection[] = await conn.admin().collections.list();
  const text = renderTypes(conn.project, collections);
  if (flags.out && flags.out !== '-') {
    try {
      fs.writeFileSync(flags.out, text);
    } catch (e) {
      throw new CliError(`cannot write ${flags.out}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    io.err.write(`wrote the types of ${collections.length} collection(s) of project "${conn.project}" to ${flags.out}\n`);
  } else {
    io.out.write(text);
  }
  return 0;
}
