/**
 * Schema as code: the file format and `plinth pull [file]` (apply is in apply.ts).
 *
 * The file: {"collections": {"<name>": {"fields": {"<field>": {"type", "required"?, "unique"?,
 * "indexed"?, "min"?, "max"?, "min_length"?, "max_length"?, "pattern"?, "enum"?, "default"?,
 * relations: "collection"?, "max_items"?, "on_delete"?, "readable_by_writer"?}},
 * "rules": {"read"?, "create"?, "update"?, "delete"?}} | null}, "auth"?: {…Auth settings…}}; `null`
 * asks for the collection to be deleted; `auth` is apply-auth.ts's. Pull writes the same shape,
 * flags only when true and options only when set (and `auth` with --auth), so pull then apply
 * changes nothing.
 */
import fs from 'node:fs';
import type { FieldDefinition, JsonValue } from '@plinth/protocol';
import type { AdminClient } from '@plinth/client/admin';
import { UsageError, type CliIo, type Connection } from '../client';
import type { Flags } from '../flags';
import { parseAuthSpec, pullAuth, type AuthSpec } from './apply-auth';

/**
 * A field as the schema file holds it: the wire definition (@plinth/protocol), except that `type`
 * and `on_delete` are any text here — a file may name what this CLI predates, and the server
 * judges it on apply.
 */
export type FieldDef = Omit<FieldDefinition, 'type' | 'on_delete' | 'searchable'> & { type: string; on_delete?: string };
export type Rules = { [op: string]: string };
export interface CollectionSpec {
  fields: { [name: string]: FieldDef };
  rules: Rules;
}
export interface SchemaFile {
  /** null: the collection must not exist (apply deletes it). */
  collections: { [name: string]: CollectionSpec | null };
  /** The project's Auth settings, when the file gives them. */
  auth?: AuthSpec;
}
export interface LiveCollection extends CollectionSpec {
  name: string;
}

const FLAGS = ['required', 'unique', 'indexed'] as const;
/** Options passed through as they are; the project checks them (and answers timestamps in UTC). */
const OPTIONS = ['min', 'max', 'min_length', 'max_length', 'pattern', 'enum', 'default', 'collection', 'max_items', 'on_delete', 'readable_by_writer'] as const;
/** A relation's options as the project fills them in when not given: pull leaves them out, apply sees no change. */
const RELATION_DEFAULTS: { [option: string]: JsonValue } = { max_items: 1, on_delete: 'restrict', readable_by_writer: false };
const withoutDefault = (type: string, option: string, v: unknown): unknown =>
  type === 'relation' && option in RELATION_DEFAULTS && v === RELATION_DEFAULTS[option] ? undefined : v;
const isObject = (v: unknown): v is { [k: string]: unknown } => typeof v === 'object' && v !== null && !Array.isArray(v);

export function parseSchema(raw: unknown, file: string): SchemaFile {
  if (!isObject(raw) || !isObject(raw.collections)) throw new UsageError(`${file}: expected {"collections": {"<name>": {"fields": {...}, "rules": {...}}}}`);
  const collections: SchemaFile['collections'] = {};
  for (const [name, spec] of Object.entries(raw.collections)) {
    if (spec === null) {
      collections[name] = null;
      continue;
    }
    if (!isObject(spec)) throw new UsageError(`${file}: collections.${name} must be an object`);
    const fields = spec.fields ?? {};
    const rules = spec.rules ?? {};
    if (!isObject(fields)) throw new UsageError(`${file}: collections.${name}.fields must be an object`);
    if (!isObject(rules) || Object.values(rules).some((r) => typeof r !== 'string')) {
      throw new UsageError(`${file}: collections.${name}.rules must map operations to rule strings`);
    }
    for (const [f, def] of Object.entries(fields)) {
      if (!isObject(def) || typeof def.type !== 'string') throw new UsageError(`${file}: collections.${name}.fields.${f} needs a "type"`);
    }
    collections[name] = { fields: fields as CollectionSpec['fields'], rules: rules as Rules };
  }
  return raw.auth === undefined ? { collections } : { collections, auth: parseAuthSpec(raw.auth, file) };
}

/** A field definition with only the flags that are true and the options given (the file's spelling). */
export function compact(def: FieldDef): FieldDef {
  const out: FieldDef = { type: def.type };
  for (const f of FLAGS) if (def[f]) out[f] = true;
  const options = Object.fromEntries(OPTIONS.filter((o) => withoutDefault(def.type, o, def[o]) !== undefined).map((o) => [o, def[o]]));
  return { ...out, ...options };
}

/** A timestamp option as the project answers it (UTC, milliseconds), so a file's spelling is no change. */
function utc(type: string, v: unknown): unknown {
  if (type !== 'timestamp' || typeof v !== 'string') return v;
  const t = new Date(v);
  return Number.isNaN(t.getTime()) ? v : t.toISOString();
}

function sameOption(type: string, option: string, a: unknown, b: unknown): boolean {
  const norm = (v: unknown) => JSON.stringify(Array.isArray(v) ? v.map((x) => utc(type, x)) : utc(type, withoutDefault(type, option, v)));
  return norm(a) === norm(b);
}

export function sameField(a: FieldDef, b: FieldDef): boolean {
  return a.type === b.type && FLAGS.every((f) => Boolean(a[f]) === Boolean(b[f])) && OPTIONS.every((o) => sameOption(a.type, o, a[o], b[o]));
}

/** The live collections, with the fields and rules the file format compares. */
export async function liveCollections(admin: AdminClient): Promise<LiveCollection[]> {
  return (await admin.collections.list()) as unknown as LiveCollection[];
}

export async function pullCommand(args: string[], flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const file = args[0] ?? 'plinth.schema.json';
  const schema: { collections: { [name: string]: CollectionSpec }; auth?: { [name: string]: unknown } } = { collections: {} };
  const admin = conn.admin();
  for (const c of await liveCollections(admin)) {
    const fields: CollectionSpec['fields'] = {};
    for (const [f, def] of Object.entries(c.fields)) fields[f] = compact(def);
    schema.collections[c.name] = { fields, rules: { ...c.rules } };
  }
  if (flags.auth) schema.auth = await pullAuth(admin);
  const text = `${JSON.stringify(schema, null, 2)}\n`;
  if (file === '-') io.out.write(text);
  else {
    fs.writeFileSync(file, text);
    io.out.write(`wrote ${Object.keys(schema.collections).length} collection(s) of project "${conn.project}" to ${file}\n`);
  }
  return 0;
}
