/**
 * `plinth apply [plinth.schema.json] [--dry-run] [--allow-data-loss a.f,b]`: make the project's
 * collections match the file, safely.
 *
 * 1. The plan is computed from the server's current state (so a re-run after a failure half-way
 *    plans only what is left, and completes it).
 * 2. Everything is validated before anything changes: each collection's fields and rules through
 *    the records service's `POST …/collections/{c}/rules/validate` (what saving would answer),
 *    type changes, and data loss — a dropped field (or deleted collection) that holds data is
 *    refused unless `--allow-data-loss` names it. `--dry-run` runs the same checks, so it answers
 *    the same errors.
 * 3. The plan is printed, then applied step by step (one request per collection, then one for
 *    the Auth settings of the file's `auth` section, apply-auth.ts). The public API has no
 *    multi-collection transaction: a step that fails stops the run, says what was applied, and a
 *    re-run completes it.
 */
import { orderByRelations } from './relation-order';
import { PlinthError, type AdminClient } from '@plinth/client/admin';
import { CliError, UsageError, describeError, type CliIo, type Connection } from '../client';
import type { Flags } from '../flags';
import { readJsonFile } from './args';
import { planAuth } from './apply-auth';
import { compact, liveCollections, parseSchema, sameField, type CollectionSpec, type FieldDef, type LiveCollection } from './schema';

interface Step {
  line: string;
  /** Collection (`c`) or field (`c.f`) whose data this step deletes. */
  drops: string[];
  method: 'POST' | 'PATCH' | 'DELETE';
  /** The collection changed; empty for the Auth settings step. */
  collection: string;
  body?: { [k: string]: unknown };
}

/** At most this many names in --allow-data-loss (each one check request at most). */
const MAX_ALLOWED = 100;

function parseAllowed(raw: string | undefined): Set<string> {
  if (raw === undefined) return new Set();
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (names.length === 0 || names.length > MAX_ALLOWED || names.some((n) => !/^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)?$/.test(n))) {
    throw new UsageError(`--allow-data-loss takes up to ${MAX_ALLOWED} comma-separated names: collection or collection.field`);
  }
  return new Set(names);
}

function updateStep(name: string, have: LiveCollection, want: CollectionSpec, file: string, problems: string[]): Step | undefined {
  const fields: { [f: string]: FieldDef | null } = {};
  const rules: { [op: string]: string | null } = {};
  const notes: string[] = [];
  const drops: string[] = [];
  for (const [f, def] of Object.entries(want.fields)) {
    const current = have.fields[f];
    if (!current) {
      fields[f] = def;
      notes.push(`+ field ${f} (${def.type})`);
    } else if (current.type !== def.type) {
      problems.push(`${name}.${f} is ${current.type} in the project and ${def.type} in ${file}: a field's type cannot change; remove the field (apply), then add it back`);
    } else if (!sameField(current, def)) {
      fields[f] = def;
      notes.push(`~ field ${f} ${JSON.stringify(compact(current))} → ${JSON.stringify(compact(def))}`);
    }
  }
  for (const f of Object.keys(have.fields)) {
    if (f in want.fields) continue;
    fields[f] = null;
    drops.push(`${name}.${f}`);
    notes.push(`- field ${f} (its values are deleted)`);
  }
  for (const op of new Set([...Object.keys(have.rules ?? {}), ...Object.keys(want.rules)])) {
    const before = have.rules?.[op];
    const after = want.rules[op];
    if (before === after) continue;
    rules[op] = after ?? null;
    notes.push(after === undefined ? `- rule ${op}` : before === undefined ? `+ rule ${op}` : `~ rule ${op}`);
  }
  if (notes.length === 0) return undefined;
  const body = { ...(Object.keys(fields).length ? { fields } : {}), ...(Object.keys(rules).length ? { rules } : {}) };
  return { line: `~ update collection ${name}: ${notes.join(', ')}`, drops, method: 'PATCH', collection: name, body };
}

/** The server's answer to "would these fields and rules be saved?", or undefined when yes. */
async function validationError(admin: AdminClient, name: string, want: CollectionSpec): Promise<string | undefined> {
  try {
    await admin.collections.validate(name, { fields: want.fields, rules: want.rules });
    return undefined;
  } catch (e) {
    if (!(e instanceof PlinthError) || e.status < 400 || e.status > 499) throw e;
    return `${name}: ${e.status} ${e.code}: ${e.message}${e.details ? ` ${JSON.stringify(e.details)}` : ''}`;
  }
}

/** Whether `c` (or field `c.f`) holds data: one record with a value (limit=1). */
async function holdsData(admin: AdminClient, target: string, live: Map<string, LiveCollection>): Promise<boolean> {
  const [c, f] = target.split('.') as [string, string | undefined];
  const type = f ? live.get(c)?.fields[f]?.type : undefined;
  if (f && type !== 'json' && type !== 'list') {
    const page = await admin.records.list(c, { limit: 1, where: [[f, '!=', null]] }).catch((e: unknown) => {
      if (e instanceof PlinthError && e.status >= 400 && e.status < 500) return null;
      throw e;
    });
    if (page) return page.records.length > 0;
  }
  // A collection, a json/list field (no `!= null` on them), or a query refused: any record counts.
  return (await admin.records.list(c, { limit: 1 })).records.length > 0;
}

/** "2 collection(s)", "2 collection(s) and the Auth settings", "the Auth settings". */
function changed(steps: Step[]): string {
  const collections = steps.filter((s) => s.collection !== '').length;
  const auth = collections < steps.length;
  if (collections === 0) return 'the Auth settings';
  return `${collections} collection(s)${auth ? ' and the Auth settings' : ''}`;
}

/** One step, through the SDK: the Auth settings, or a collection created, changed or deleted. */
async function applyStep(admin: AdminClient, step: Step): Promise<void> {
  const body = step.body ?? {};
  if (step.collection === '') await admin.authSettings.update(body);
  else if (step.method === 'POST') await admin.collections.create(body as Parameters<AdminClient['collections']['create']>[0]);
  else if (step.method === 'PATCH') await admin.collections.update(step.collection, body);
  else await admin.collections.delete(step.collection);
}

export async function applyCommand(args: string[], flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const file = args[0] ?? 'plinth.schema.json';
  const schema = parseSchema(readJsonFile(file), file);
  const allowed = parseAllowed(flags['allow-data-loss']);
  const admin = conn.admin();
  const dry = Boolean(flags['dry-run']);
  const live = new Map((await liveCollections(admin)).map((c) => [c.name, c]));
  const say = (line: string) => io.out.write(`${dry ? '(dry run) ' : ''}${line}\n`);

  // Plan from the current state, and check everything before changing anything.
  const steps: Step[] = [];
  const problems: string[] = [];
  for (const [name, want] of Object.entries(schema.collections)) {
    const have = live.get(name);
    if (want === null) {
      if (have) steps.push({ line: `- delete collection ${name} (its records are deleted)`, drops: [name], method: 'DELETE', collection: name });
      continue;
    }
    const invalid = await validationError(admin, name, want);
    if (invalid) problems.push(invalid);
    if (!have) {
      const fields = Object.keys(want.fields).join(', ') || 'none';
      const rules = Object.keys(want.rules).join(', ') || 'none';
      steps.push({ line: `+ create collection ${name} (fields: ${fields}; rules: ${rules})`, drops: [], method: 'POST', collection: name, body: { name, ...want } });
      continue;
    }
    const step = updateStep(name, have, want, file, problems);
    if (step) steps.push(step);
  }
  steps.splice(0, steps.length, ...orderByRelations(steps));
  for (const target of steps.flatMap((s) => s.drops)) {
    if (allowed.has(target) || !(await holdsData(admin, target, live))) continue;
    problems.push(`${target} holds data: deleting it needs --allow-data-loss ${target}`);
  }
  if (schema.auth) {
    const auth = await planAuth(admin, schema.auth, io.env);
    problems.push(...auth.problems);
    if (auth.line) steps.push({ line: auth.line, drops: [], method: 'PATCH', collection: '', body: auth.body });
  }

  for (const step of steps) say(step.line);
  const untouched = [...live.keys()].filter((n) => !(n in schema.collections));
  if (untouched.length) io.out.write(`collections not in ${file}, left as they are: ${untouched.join(', ')}\n`);
  if (problems.length) throw new CliError(`nothing changed; ${file} cannot be applied:\n  ${problems.join('\n  ')}`);
  if (steps.length === 0) {
    io.out.write(`no changes: project "${conn.project}" matches ${file}\n`);
    return 0;
  }
  if (dry) {
    io.out.write(`${changed(steps)} would change\n`);
    return 0;
  }

  for (const [i, step] of steps.entries()) {
    try {
      await applyStep(admin, step);
    } catch (e) {
      if (!(e instanceof PlinthError)) throw e;
      throw new CliError(
        `${describeError(e, conn.url)}\n${i} of ${steps.length} step(s) applied; ${step.collection ? `collection ${step.collection}` : 'the Auth settings'} and the ones after it were not changed.` +
          ` Fix the cause and run apply again: it plans from the project's current state and completes the rest.`,
      );
    }
  }
  io.out.write(`${changed(steps)} changed\n`);
  return 0;
}
