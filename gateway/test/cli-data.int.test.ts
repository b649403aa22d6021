/**
 * The CLI's project-data commands against a live gateway (real HTTP): collections, records
 * (list, get, export, import), users, schema as code (apply, pull) and doctor.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../clients/cli/src/run';
import { freePort } from '@plinth/testing/free-port';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

const EXAMPLE_SCHEMA = path.resolve(__dirname, '../../examples/plinth.schema.json');

describe('plinth CLI: collections, records, users, apply/pull, doctor', () => {
  let t: TestPlinth;
  let url: string;
  let dir: string;
  beforeAll(async () => {
    // Mail links lead to this server, as a real one's do (doctor checks that they answer).
    const port = await freePort();
    t = await startTestPlinth({ env: { PLINTH_MAIL_POLL_MS: '50', PLINTH_PUBLIC_URL: `http://127.0.0.1:${port}` }, gatewayPort: port });
    url = await t.url();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-cli-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Connection through the environment, as a user sets it. */
  async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await runCli(args, {
      env: { PLINTH: url, PLINTH_PROJECT: t.project.id, PLINTH_SECRET_KEY: t.project.secretKey, PLINTH_ADMIN_KEY: t.adminKey, ...env },
      out: { write: (s: string) => (out += s) },
      err: { write: (s: string) => (err += s) },
    });
    return { code, out, err };
  }
  const json = async (args: string[]) => {
    const r = await cli(args);
    if (r.code !== 0) throw new Error(`plinth ${args.join(' ')} → ${r.code}: ${r.err}`);
    return JSON.parse(r.out);
  };
  async function api(method: string, rest: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`${url}/v1/projects/${t.project.id}${rest}`, {
      method,
      headers: { Authorization: `Bearer ${t.project.secretKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: await res.json() };
  }
  const file = (name: string, text: string): string => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text);
    return p;
  };

  it('creates a collection from a JSON file, lists, shows and deletes it', async () => {
    const def = file('birds.json', JSON.stringify({ name: 'birds', fields: { name: { type: 'text', required: true } } }));
    expect((await json(['collections', 'create', def])).collection).toMatchObject({ name: 'birds', revision: 1 });
    expect((await json(['collections', 'list'])).collections.map((c: { name: string }) => c.name)).toContain('birds');
    expect((await json(['collections', 'show', 'birds'])).collection.fields.name).toEqual({ type: 'text', required: true, unique: false, indexed: false });
    const shown = file('birds-shown.json', (await cli(['collections', 'show', 'birds'])).out);
    expect(await json(['collections', 'delete', 'birds'])).toEqual({ deleted: true, name: 'birds' });
    // What `collections show` printed creates the collection again (revision and timestamps left out).
    expect((await json(['collections', 'create', shown])).collection).toMatchObject({ name: 'birds', revision: 1 });
    expect(await json(['collections', 'delete', 'birds'])).toEqual({ deleted: true, name: 'birds' });
    const gone = await cli(['collections', 'show', 'birds']);
    expect(gone.code).toBe(1);
    expect(gone.err).toMatch(/→ 404 not_found/);
    expect((await cli(['collections', 'create', path.join(dir, 'missing.json')])).code).toBe(2);
  });

  it('lists with --where and gets records; export → delete collection → import restores them; a second import creates nothing', async () => {
    const def = file('books.json', JSON.stringify({ name: 'books', fields: { title: { type: 'text', required: true }, year: { type: 'integer', indexed: true }, tags: { type: 'list' } } }));
    await json(['collections', 'create', def]);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await api('POST', '/collections/books/records', { data: { title: `book ${i}`, year: 2000 + i, ...(i % 2 ? { tags: ['odd', i] } : {}) } });
      ids.push(r.body.record.id);
    }
    await api('PATCH', `/collections/books/records/${ids[1]}`, { data: { title: 'book one, revised' } });

    const listed = await json(['records', 'list', 'books', '--where', '[["year",">=",2003]]', '--order-by', 'year', '--direction', 'desc', '--limit', '1']);
    expect(listed.records.map((r: { year: number }) => r.year)).toEqual([2004]);
    expect(listed.cursor).toEqual(expect.any(String));
    const next = await json(['records', 'list', 'books', '--where', '[["year",">=",2003]]', '--order-by', 'year', '--direction', 'desc', '--cursor', listed.cursor]);
    expect(next).toEqual({ records: [expect.objectContaining({ year: 2003 })], cursor: null });
    expect((await json(['records', 'get', 'books', ids[1]!])).record).toMatchObject({ id: ids[1], version: 2, title: 'book one, revised' });
    expect((await cli(['records', 'list', 'books', '--limit', 'x'])).code).toBe(2);

    const before = (await api('GET', '/collections/books/records?orderBy=id&limit=100')).body.records;
    const exportFile = path.join(dir, 'books.ndjson');
    const exported = await cli(['records', 'export', 'books', '--out', exportFile]);
    expect(exported.code).toBe(0);
    const lines = fs.readFileSync(exportFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toEqual(before);
    expect((await cli(['records', 'export', 'books'])).out).toBe(fs.readFileSync(exportFile, 'utf8'));

    await json(['collections', 'delete', 'books']);
    await json(['collections', 'create', def]);
    expect(await json(['records', 'import', 'books', exportFile])).toEqual({ imported: 5, existing: 0 });
    const after = (await api('GET', '/collections/books/records?orderBy=id&limit=100')).body.records;
    expect(after).toEqual(before);
    expect(await json(['records', 'import', 'books', exportFile])).toEqual({ imported: 0, existing: 5 });
    expect((await api('GET', '/collections/books/records?orderBy=id&limit=100')).body.records).toEqual(before);

    // Lines without an id are created once: their Idempotency-Key comes from the line.
    const fresh = file('new-books.ndjson', '{"title":"new A","year":1999}\n{"title":"new B"}\n');
    expect(await json(['records', 'import', 'books', fresh])).toEqual({ imported: 2, existing: 0 });
    expect(await json(['records', 'import', 'books', fresh])).toEqual({ imported: 0, existing: 2 });
    expect((await api('GET', '/collections/books/records?limit=100')).body.records).toHaveLength(7);

    const bad = await cli(['records', 'import', 'books', file('bad.ndjson', '{"title":"ok"}\nnot json\n')]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('bad.ndjson:2: not a JSON object');
  });

  it('records:import is secret-key only and validates what it restores', async () => {
    await api('POST', '/collections', { name: 'imports', fields: { n: { type: 'integer', required: true } } });
    const good = { id: 'rec_06h0gv9ykgq7h3hdnt397ms3e8', version: 3, created_at: '2026-01-01T00:00:00+01:00', updated_at: '2026-01-02T00:00:00.000Z', n: 1 };
    const pub = await fetch(`${url}/v1/projects/${t.project.id}/collections/imports/records:import`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${t.project.publicKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ records: [good] }),
    });
    expect(pub.status).toBe(403);
    expect((await api('POST', '/collections/imports/records:import', { records: [{ ...good, n: 'x' }] })).status).toBe(400);
    expect((await api('POST', '/collections/imports/records:import', { records: [{ ...good, id: 'rec_nope' }] })).body.details).toEqual({ index: 0, field: 'id' });
    expect((await api('POST', '/collections/imports/records:import', { records: [good] })).body).toEqual({ imported: 1, existing: 0 });
    expect((await api('GET', `/collections/imports/records/${good.id}`)).body.record).toEqual({ ...good, created_at: '2025-12-31T23:00:00.000Z' });
  });

  it('lists users, disables one (their sign-in stops) and sends a password reset', async () => {
    await api('PATCH', '/settings/auth', { enabled: true });
    const created = await api('POST', '/auth/users', { email: 'cli-user@example.com', password: 'a long password' });
    const id = created.body.user.id as string;
    expect((await json(['users', 'list', '--search', 'cli-user'])).users.map((u: { id: string }) => u.id)).toEqual([id]);
    expect((await json(['users', 'disable', id])).user.status).toBe('disabled');
    const signin = await fetch(`${url}/v1/projects/${t.project.id}/auth/signin`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${t.project.publicKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'cli-user@example.com', password: 'a long password' }),
    });
    expect(signin.status).toBe(401);
    expect((await json(['users', 'enable', id])).user.status).toBe('active');
    expect(await json(['users', 'send-reset', id])).toEqual({ sent: true });
    let kinds: string[] = [];
    for (let i = 0; i < 100 && !kinds.includes('reset'); i++) {
      await new Promise((r) => setTimeout(r, 50));
      kinds = (await api('GET', '/mailbox?to=cli-user@example.com')).body.messages.map((m: { kind: string }) => m.kind);
    }
    expect(kinds).toContain('reset');
    expect((await cli(['users', 'disable', 'usr_unknown'])).code).toBe(1);
  });

  it('apply creates and updates collections to match a file (--dry-run changes nothing); pull writes the file back', async () => {
    const p = await t.createProject();
    const as = (args: string[]) => cli(args, { PLINTH_PROJECT: p.id, PLINTH_SECRET_KEY: p.secretKey });
    const dry = await as(['apply', EXAMPLE_SCHEMA, '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.out).toContain('(dry run) + create collection tasks');
    expect(dry.out).toContain('(dry run) + create collection comments');
    const pulledEmpty = await as(['pull', '-']);
    expect(JSON.parse(pulledEmpty.out)).toEqual({ collections: {} });

    const applied = await as(['apply', EXAMPLE_SCHEMA]);
    expect(applied.code).toBe(0);
    expect(applied.out).toContain('2 collection(s) changed');
    expect((await as(['apply', EXAMPLE_SCHEMA])).out).toContain('no changes');
    const pulledFile = path.join(dir, 'pulled.json');
    expect((await as(['pull', pulledFile])).code).toBe(0);
    expect(JSON.parse(fs.readFileSync(pulledFile, 'utf8'))).toEqual(JSON.parse(fs.readFileSync(EXAMPLE_SCHEMA, 'utf8')));

    const edited = JSON.parse(fs.readFileSync(EXAMPLE_SCHEMA, 'utf8'));
    delete edited.collections.tasks.fields.tags;
    edited.collections.tasks.fields.priority = { type: 'integer' };
    edited.collections.tasks.fields.title.unique = true;
    edited.collections.tasks.rules.read = 'auth != null';
    delete edited.collections.tasks.rules.delete;
    const editedFile = file('edited.json', JSON.stringify(edited));
    const changed = await as(['apply', editedFile]);
    expect(changed.out).toContain('~ update collection tasks: ~ field title {"type":"text","required":true} → {"type":"text","required":true,"unique":true}, + field priority (integer), - field tags (its values are deleted), ~ rule read, - rule delete');
    const shown = await as(['pull', '-']);
    expect(JSON.parse(shown.out)).toEqual(edited);

    edited.collections.tasks.fields.priority = { type: 'text' };
    const typeChange = await as(['apply', file('type.json', JSON.stringify(edited))]);
    expect(typeChange.code).toBe(1);
    expect(typeChange.err).toContain('tasks.priority is integer in the project and text in');
    expect((await as(['apply', file('broken.json', '{"tasks":{}}')])).code).toBe(2);
  });

  it('apply and pull carry field options: a timestamp spelt in another zone is no change, a changed option is', async () => {
    const p = await t.createProject();
    const as = (args: string[]) => cli(args, { PLINTH_PROJECT: p.id, PLINTH_SECRET_KEY: p.secretKey });
    const schema = {
      collections: {
        events: {
          fields: {
            title: { type: 'text', required: true, min_length: 1, max_length: 80, pattern: '^\\S' },
            seats: { type: 'integer', min: 1, max: 500, default: 10 },
            kind: { type: 'text', enum: ['talk', 'workshop'], default: 'talk' },
            starts: { type: 'timestamp', min: '2026-01-01T00:00:00+01:00' },
            tags: { type: 'list', max_length: 5, default: [] },
          },
          rules: {},
        },
      },
    };
    expect((await as(['apply', file('options.json', JSON.stringify(schema))])).code).toBe(0);
    expect((await as(['apply', file('options.json', JSON.stringify(schema))])).out).toContain('no changes');
    const pulled = JSON.parse((await as(['pull', '-'])).out);
    expect(pulled.collections.events.fields).toEqual({
      ...schema.collections.events.fields,
      starts: { type: 'timestamp', min: '2025-12-31T23:00:00.000Z' },
    });

    schema.collections.events.fields.seats.max = 100;
    const changed = await as(['apply', file('options2.json', JSON.stringify(schema))]);
    expect(changed.out).toContain('~ field seats {"type":"integer","min":1,"max":500,"default":10} → {"type":"integer","min":1,"max":100,"default":10}');
    expect(JSON.parse((await as(['pull', '-'])).out).collections.events.fields.seats.max).toBe(100);
  });

  it('doctor passes with good settings and fails, one line per check, on a bad key or an unreachable server', async () => {
    const good = await cli(['doctor']);
    expect(good.code).toBe(0);
    expect(good.out).toContain('ok    the operator key is valid');
    expect(good.out).toContain(`ok    the secret key is valid for project "${t.project.id}"`);
    expect(good.out).toContain(`ok    mail links point to ${url}, which answers`);
    expect(good.out).toContain('all checks passed');
    const publicAsSecret = await cli(['doctor'], { PLINTH_SECRET_KEY: t.project.publicKey });
    expect(publicAsSecret.code).toBe(1);
    expect(publicAsSecret.out).toContain(`FAIL  the secret key is a public key of "${t.project.id}"`);
    const wrongAdmin = await cli(['doctor', '--admin-key', 'adm_wrong']);
    expect(wrongAdmin.code).toBe(1);
    expect(wrongAdmin.out).toContain('FAIL  the operator key is refused (401)');
    // A server whose mail links lead elsewhere (PLINTH_PUBLIC_URL left at another port).
    const misplaced = await startTestPlinth({ env: { PLINTH_PUBLIC_URL: 'http://127.0.0.1:9' } });
    try {
      const r = await cli(['doctor'], { PLINTH: await misplaced.url(), PLINTH_PROJECT: misplaced.project.id, PLINTH_SECRET_KEY: misplaced.project.secretKey, PLINTH_ADMIN_KEY: misplaced.adminKey });
      expect(r.code).toBe(1);
      expect(r.out).toMatch(/FAIL  mail links point to http:\/\/127\.0\.0\.1:9, which does not answer .*: set PLINTH_PUBLIC_URL to the address your users reach/);
    } finally {
      await misplaced.close();
    }
    const down = await cli(['doctor', '--url', 'http://127.0.0.1:9']);
    expect(down.code).toBe(1);
    expect(down.out).toContain('FAIL  cannot reach http://127.0.0.1:9');
  });
});
