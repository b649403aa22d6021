/**
 * Schema as code: `plinth apply plinth.schema.json [--dry-run]` and `plinth pull [file]`.
 *
 * The file: {"collections": {"<name>": {"fields": {"<field>": {"type", "required"?, "unique"?,
 * "indexed"?}}, "rules": {"read"?, "create"?, "update"?, "delete"?}}}}. Apply creates missing
 * collections and PATCHes existing ones so their fields and rules equal the file's; it never
 * deletes a collection. Pull writes the same shape, flags only when true, so pull then apply
 * changes nothing.
 */
import fs from 'node:fs';
import { CliError, UsageError, type CliIo, type Connection } from '../client';
import type { Flags } from '../flags';
import { readJsonFile } from './args';

interface FieldDef {
  type: string;
  required?: boolean;
  unique?: boolean;
  indexed?: boolean;
}
type Rules = { [op: string]: string };
interface CollectionSpec {
  fields: { [name: string]: FieldDef };
  rules: Rules;
}
export interface SchemaFile {
  collections: { [name: string]: CollectionSpec };
}
interface LiveCollection extends CollectionSpec {
  name: string;
}

const FLAGS = ['required', 'unique', 'indexed'] as const;
const isObject = (v: unknown): v is { [k: string]: unknown } => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseSchema(raw: unknown, file: string): SchemaFile {
  if (!isObject(raw) || !isObject(raw.collections)) throw new UsageError(`${file}: expected {"collections": {"<name>": {"fields": {...}, "rules": {...}}}}`);
  const collections: SchemaFile['collections'] = {};
  for (const [name, spec] of Object.entries(raw.collections)) {
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
  return { collections };
}

/** A field definition with only the flags that are true (the file's spelling). */
function compact(def: FieldDef): FieldDef {
  const out: FieldDef = { type: def.type };
  for (const f of FLAGS) if (def[f]) out[f] = true;
  return out;
}

function sameField(a: FieldDef, b: FieldDef): boolean {
  return a.type === b.type && FLAGS.every((f) => Boolean(a[f]) === Boolean(b[f]));
}

async function liveCollections(conn: Connection, key: string): Promise<LiveCollection[]> {
  const r = await conn.ok<{ collections: LiveCollection[] }>('GET', conn.projectPath('/collections'), { key });
  return r.collections;
}

export async function pullCommand(args: string[], _flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const file = args[0] ?? 'plinth.schema.json';
  const schema: SchemaFile = { collections: {} };
  for (const c of await liveCollections(conn, conn.requireSecretKey())) {
    const fields: CollectionSpec['fields'] = {};
    for (const [f, def] of Object.entries(c.fields)) fields[f] = compact(def);
    schema.collections[c.name] = { fields, rules: { ...c.rules } };
  }
  const text = `${JSON.stringify(schema, null, 2)}\n`;
  if (file === '-') io.out.write(text);
  else {
    fs.writeFileSync(file, text);
    io.out.write(`wrote ${Object.keys(schema.collections).length} collection(s) of project "${conn.project}" to ${file}\n`);
  }
  return 0;
}

export async function applyCommand(args: string[], flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const file = args[0] ?? 'plinth.schema.json';
  const schema = parseSchema(readJsonFile(file), file);
  const key = conn.requireSecretKey();
  const dry = Boolean(flags['dry-run']);
  const live = new Map((await liveCollections(conn, key)).map((c) => [c.name, c]));
  const say = (line: string) => io.out.write(`${dry ? '(dry run) ' : ''}${line}\n`);
  let changes = 0;

  for (const [name, want] of Object.entries(schema.collections)) {
    const have = live.get(name);
    if (!have) {
      changes++;
      const fields = Object.keys(want.fields).join(', ') || 'none';
      const rules = Object.keys(want.rules).join(', ') || 'none';
      say(`+ create collection ${name} (fields: ${fields}; rules: ${rules})`);
      if (!dry) await conn.ok('POST', conn.projectPath('/collections'), { key, body: { name, fields: want.fields, rules: want.rules } });
      continue;
    }
    const fieldPatch: { [f: string]: FieldDef | null } = {};
    const rulePatch: { [op: string]: string | null } = {};
    const notes: string[] = [];
    for (const [f, def] of Object.entries(want.fields)) {
      const current = have.fields[f];
      if (!current) {
        fieldPatch[f] = def;
        notes.push(`+ field ${f} (${def.type})`);
      } else if (current.type !== def.type) {
        throw new CliError(
          `${name}.${f} is ${current.type} in the project and ${def.type} in ${file}: a field's type cannot change; remove the field (apply), then add it back`,
        );
      } else if (!sameField(current, def)) {
        fieldPatch[f] = def;
        notes.push(`~ field ${f} ${JSON.stringify(compact(current))} → ${JSON.stringify(compact(def))}`);
      }
    }
    for (const f of Object.keys(have.fields)) {
      if (!(f in want.fields)) {
        fieldPatch[f] = null;
        notes.push(`- field ${f} (its values are deleted)`);
      }
    }
    for (const op of new Set([...Object.keys(have.rules ?? {}), ...Object.keys(want.rules)])) {
      const before = have.rules?.[op];
      const after = want.rules[op];
      if (before === after) continue;
      rulePatch[op] = after ?? null;
      notes.push(after === undefined ? `- rule ${op}` : before === undefined ? `+ rule ${op}` : `~ rule ${op}`);
    }
    if (notes.length === 0) continue;
    changes++;
    say(`~ update collection ${name}: ${notes.join(', ')}`);
    if (!dry) {
      const body = { ...(Object.keys(fieldPatch).length ? { fields: fieldPatch } : {}), ...(Object.keys(rulePatch).length ? { rules: rulePatch } : {}) };
      await conn.ok('PATCH', conn.projectPath(`/collections/${encodeURIComponent(name)}`), { key, body });
    }
  }
  const untouched = [...live.keys()].filter((n) => !(n in schema.collections));
  if (untouched.length) io.out.write(`collections not in ${file}, left as they are: ${untouched.join(', ')}\n`);
  io.out.write(changes === 0 ? `no changes: project "${conn.project}" matches ${file}\n` : `${changes} collection(s) ${dry ? 'would change' : 'changed'}\n`);
  return 0;
}
