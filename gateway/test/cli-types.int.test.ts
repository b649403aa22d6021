/**
 * `plinth types` against a live standalone Plinth: the generated file, used by an app through
 * `createClient<Collections>` of @plinth/client, compiles (TypeScript compiler API) when the app
 * names the fields right, and does not compile — naming the field — when it names one wrong.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { renderTypes } from '../../clients/cli/src/commands/types';
import { runCli } from '../../clients/cli/src/run';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

const ROOT = path.resolve(__dirname, '../..');
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
  const notes = await plinth.collection('todo_items').update('id', { body: null, task: task.id });
  const taskId: string | undefined = notes.task; // a relation holds the record's id
  const server = createRecordsClient<Collections>({ url: 'http://localhost:8080', project: 'demo', key: 'sk_x' });
  const more = await server.collection('tasks').where('tags', 'array-contains', 'docs').get();
  return [title, version, done, due, taskId, page.records[0]?.estimate, notes.body, more.records[0]?.title].join();
}
`;

/** The same app with one field name misspelt, and with one collection name misspelt. */
const WRONG_FIELD = APP.replace("{ title: 'write docs',", "{ titel: 'write docs',");
const WRONG_COLLECTION = APP.replace("collection('todo_items')", "collection('todo_item')");

/** An app reading file fields (`file`, `files`): each file's metadata is typed. */
const FILES_APP = `import { createClient } from '@plinth/client';
import type { Collections } from './photo-types';

const plinth = createClient<Collections>({ url: 'http://localhost:8080', project: 'demo', key: 'pk_x' });

export async function main(): Promise<string> {
  const album = await plinth.collection('albums').get('rec_1');
  const cover = album.cover; // one file's metadata, or undefined
  const sizes: number[] = (album.pages ?? []).map((p) => p.size);
  return [cover?.name, cover?.type, cover?.sha256, cover?.created_at, sizes.join()].join();
}
`;
const FILES_WRONG = FILES_APP.replace('cover?.sha256', 'cover?.sha265');

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
   * Type-checks the apps beside the generated types with the TypeScript compiler API, in one
   * program (each file's errors are its own): `file(line,col): error TSnnnn: message` per error.
   */
  function compile(apps: { [file: string]: string }, types: { [file: string]: string }): string[] {
    const project = fs.mkdtempSync(path.join(dir, 'app-'));
    for (const [file, from] of Object.entries(types)) fs.copyFileSync(from, path.join(project, file));
    for (const [file, text] of Object.entries(apps)) fs.writeFileSync(path.join(project, file), text);
    const options: ts.CompilerOptions = {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      paths: { '@plinth/client': [`${SDK}/index.ts`], '@plinth/client/records': [`${SDK}/records.ts`] },
    };
    const program = ts.createProgram(Object.keys(apps).map((f) => path.join(project, f)), options);
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const at = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
      const where = d.file ? `${path.relative(project, d.file.fileName)}(${(at?.line ?? 0) + 1},${(at?.character ?? 0) + 1})` : '';
      return `${where}: error TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
  }

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
    await createCollection('todo_items', { body: { type: 'text' }, task: { type: 'relation', collection: 'tasks' } });

    const file = path.join(dir, 'plinth-types.ts');
    const generated = await cli(['types', '--out', file]);
    expect(generated).toMatchObject({ code: 0, out: '' });
    expect(generated.err).toBe(`wrote the types of 2 collection(s) of project "${t.project.id}" to ${file}\n`);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toContain('export interface TasksRecord {');
    expect(text).toContain('export interface Collections {\n  tasks: TasksRecord;\n  todo_items: TodoItemsRecord;\n}');
    // stdout without --out: the same text
    expect((await cli(['types'])).out).toBe(text);

    expect(text).toContain('  task?: RecordId; // → "tasks"\n');

    // file fields, as the server lists them once a collection has them: each file's metadata
    const photoTypes = path.join(dir, 'photo-types.ts');
    fs.writeFileSync(photoTypes, renderTypes(t.project.id, [{ name: 'albums', fields: { cover: { type: 'file' }, pages: { type: 'files', max_items: 20 } } }]));

    // right.ts compiles (no error names it); wrong-field.ts fails once, on the field; wrong-collection.ts on the name
    const apps = { 'right.ts': APP, 'wrong-field.ts': WRONG_FIELD, 'wrong-collection.ts': WRONG_COLLECTION, 'files.ts': FILES_APP, 'files-wrong.ts': FILES_WRONG };
    const errors = compile(apps, { 'plinth-types.ts': file, 'photo-types.ts': photoTypes });
    const of = (app: string) => errors.filter((line) => line.startsWith(`${app}(`));
    expect(of('right.ts')).toEqual([]);
    expect(of('files.ts')).toEqual([]);
    expect(of('wrong-field.ts')).toHaveLength(1);
    expect(of('wrong-field.ts')[0]).toMatch(/^wrong-field\.ts\(9,\d+\): error TS2561: .*'titel' does not exist .*Did you mean to write 'title'\?/);
    expect(of('wrong-collection.ts')[0]).toMatch(/^wrong-collection\.ts\(16,\d+\): error TS2769: No overload matches this call/);
    expect(errors.join('\n')).toContain(`Argument of type '"todo_item"' is not assignable to parameter of type 'keyof Collections'.`);
    expect(of('files-wrong.ts')).toEqual([expect.stringMatching(/^files-wrong\.ts\(10,\d+\): error TS2551: Property 'sha265' does not exist on type 'FileMeta'\. Did you mean 'sha256'\?/)]);
    expect(errors.filter((line) => !/^(wrong-field|wrong-collection|files-wrong)\.ts\(/.test(line))).toEqual([]);
  });
});
