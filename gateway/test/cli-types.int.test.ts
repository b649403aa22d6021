/**
 * `plinth types` against a live standalone Plinth: the generated file, used by an app through
 * `createClient<Collections>` of @plinth/client, compiles with `tsc` when the app names the
 * fields right, and does not compile — naming the field — when it names one wrong.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../src/cli/run';
import { startTestPlinth, type TestPlinth } from '../src/testing/harness';

const ROOT = path.resolve(__dirname, '../..');
const TSC = require.resolve('typescript/bin/tsc');
const SDK = path.join(ROOT, 'clients/js/src');

/** An app as a user writes it against the generated types. */
const APP = `import { createClient } from '@plinth/client';
import { createRecordsClient } from '@plinth/client/records';
import type { Collections } from './plinth-types';

const plinth = createClient<Collections>({ url: 'http://localhost:8080', project: 'demo', key: 'pk_x' });

export async function main(): Promise<string> {
  const tasks = plinth.collection('tasks');
  const task = await tasks.create({ title: 'write docs', done: false, estimate: 1.5, priority: 2, due: '2026-12-01T10:00:00Z', meta: { a: [1] }, tags: ['docs', 1, true] });
  const title: string = task.title; // required: never undefined
  const version: number = task.version; // system fields come back too
  // @ts-expect-error done is optional, so it may be undefined
  const done: boolean = task.done;
  const due: string | undefined = task.due;
  const page = await tasks.where('priority', '>=', 1).orderBy('due', 'desc').get();
  const notes = await plinth.collection('todo_items').update('id', { body: null });
  const server = createRecordsClient<Collections>({ url: 'http://localhost:8080', project: 'demo', key: 'sk_x' });
  const more = await server.collection('tasks').where('tags', 'array-contains', 'docs').get();
  return [title, version, done, due, page.records[0]?.estimate, notes.body, more.records[0]?.title].join();
}
`;

/** The same app with one field name misspelt, and with one collection name misspelt. */
const WRONG_FIELD = APP.replace("{ title: 'write docs',", "{ titel: 'write docs',");
const WRONG_COLLECTION = APP.replace("collection('todo_items')", "collection('todo_item')");

describe('plinth types', () => {
  let t: TestPlinth;
  let dir: string;
  beforeAll(async () => {
    t = await startTestPlinth();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-types-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await runCli(args, {
      env: { PLINTH: await t.url(), PLINTH_PROJECT: t.project.id, PLINTH_SECRET_KEY: t.project.secretKey, PLINTH_DATA_DIR: dir, ...env },
      out: { write: (s: string) => (out += s) },
      err: { write: (s: string) => (err += s) },
    });
    return { code, out, err };
  }

  async function createCollection(name: string, fields: object): Promise<void> {
    const res = await fetch(`${await t.url()}/v1/projects/${t.project.id}/collections`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${t.project.secretKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name, fields }),
    });
    expect(res.status).toBe(201);
  }

  /**
   * `tsc --noEmit` on the apps beside the generated types, in a directory of their own: one
   * program, so each file's errors are its own and the compiler starts once.
   */
  function compile(apps: { [file: string]: string }, types: string): Promise<{ code: number; output: string }> {
    const project = fs.mkdtempSync(path.join(dir, 'app-'));
    fs.copyFileSync(types, path.join(project, 'plinth-types.ts'));
    for (const [file, text] of Object.entries(apps)) fs.writeFileSync(path.join(project, file), text);
    const compilerOptions = {
      strict: true,
      noEmit: true,
      target: 'ES2022',
      module: 'ESNext',
      moduleResolution: 'bundler',
      lib: ['ES2022', 'DOM'],
      types: [],
      paths: { '@plinth/client': [`${SDK}/index.ts`], '@plinth/client/records': [`${SDK}/records.ts`] },
    };
    fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: Object.keys(apps) }));
    return new Promise((resolve) => {
      execFile(process.execPath, [TSC, '-p', project], { cwd: project }, (err, stdout, stderr) => {
        resolve({ code: err ? Number(err.code ?? 1) : 0, output: `${stdout}${stderr}` });
      });
    });
  }

  it('writes types an app compiles against, and a misspelt field or collection does not compile', async () => {
    await createCollection('tasks', {
      title: { type: 'text', required: true },
      done: { type: 'boolean' },
      estimate: { type: 'number' },
      priority: { type: 'integer', indexed: true },
      due: { type: 'timestamp', indexed: true },
      meta: { type: 'json' },
      tags: { type: 'list' },
    });
    await createCollection('todo_items', { body: { type: 'text' } });

    const file = path.join(dir, 'plinth-types.ts');
    const generated = await cli(['types', '--out', file]);
    expect(generated).toMatchObject({ code: 0, out: '' });
    expect(generated.err).toBe(`wrote the types of 2 collection(s) of project "${t.project.id}" to ${file}\n`);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toContain('export interface TasksRecord {');
    expect(text).toContain('export interface Collections {\n  tasks: TasksRecord;\n  todo_items: TodoItemsRecord;\n}');
    // stdout without --out: the same text
    expect((await cli(['types'])).out).toBe(text);

    // right.ts compiles (no error names it); wrong-field.ts fails once, on the field; wrong-collection.ts on the name
    const tsc = await compile({ 'right.ts': APP, 'wrong-field.ts': WRONG_FIELD, 'wrong-collection.ts': WRONG_COLLECTION }, file);
    expect(tsc.code).not.toBe(0);
    const errors = tsc.output.split('\n').filter((line) => /error TS/.test(line));
    const of = (app: string) => errors.filter((line) => line.startsWith(`${app}(`));
    expect(of('right.ts')).toEqual([]);
    expect(of('wrong-field.ts')).toHaveLength(1);
    expect(of('wrong-field.ts')[0]).toMatch(/^wrong-field\.ts\(9,\d+\): error TS2561: .*'titel' does not exist .*Did you mean to write 'title'\?/);
    expect(of('wrong-collection.ts')[0]).toMatch(/^wrong-collection\.ts\(16,\d+\): error TS2769: No overload matches this call/);
    expect(tsc.output).toContain(`Argument of type '"todo_item"' is not assignable to parameter of type 'keyof Collections'.`);
  });

  it('refuses a stray argument with exit code 2, needs the secret key, and says when it cannot write', async () => {
    const stray = await cli(['types', 'out.ts']);
    expect(stray.code).toBe(2);
    expect(stray.err).toBe('plinth: unexpected argument "out.ts": the file is given with --out FILE (see `plinth types --help`)\n');
    const keyless = await cli(['types'], { PLINTH_SECRET_KEY: undefined });
    expect(keyless.code).toBe(2);
    expect(keyless.err).toContain(`no secret key for project "${t.project.id}"`);
    expect(keyless.out).toBe('');
    const nowhere = path.join(dir, 'missing-dir', 'plinth-types.ts');
    expect(await cli(['types', '--out', nowhere])).toEqual({ code: 1, out: '', err: `plinth: cannot write ${nowhere}: ENOENT\n` });
  });
});
