/**
 * Text search through the real gateway: the `contains` and `starts-with` operators in `where`
 * (and their 400s), `?search=` over searchable fields (ranked, paged, counted, combined with
 * where), its bounds and 400s, and the read rule: a user's search, its count and its sums are
 * exactly those of what that user can list.
 */
import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { client, qs, type Client } from './client';

let t: TestPlinth;
let api: Client;

const at = (path: string): string => `/v1/projects/${t.project.id}${path}`;
type Rec = { id: string; title?: string; n?: number; owner?: string };
const titles = (res: request.Response): string[] => (res.body.records as Rec[]).map((r) => r.title ?? '');

beforeAll(async () => {
  t = await startTestPlinth();
  api = client(t);
  await api
    .post('/collections', {
      name: 'posts',
      fields: {
        title: { type: 'text', searchable: true },
        body: { type: 'text', searchable: true },
        owner: { type: 'text', indexed: true },
        n: { type: 'integer' },
        tags: { type: 'list' },
        plain: { type: 'text' },
      },
      rules: { read: 'auth != null && record.owner == auth.uid', create: 'auth != null && data.owner == auth.uid' },
    })
    .expect(201);
  const rows: Array<[string, string, string, number]> = [
    ['Rust for beginners', 'ownership and borrowing explained', 'u1', 1],
    ['Advanced Rust', 'lifetimes, traits and rust macros, rust rust', 'u1', 2],
    ['Go for beginners', 'goroutines and channels', 'u2', 3],
    ['The 100% guide_to SQL', 'rust free; joins explained', 'u2', 4],
    ['Cooking', 'no code here', 'u1', 5],
  ];
  for (const [title, body, owner, n] of rows) {
    await api.post('/collections/posts/records', { data: { title, body, owner, n, tags: ['x'], plain: 'rust' } }).expect(201);
  }
  await api.post('/collections', { name: 'plain', fields: { title: { type: 'text' } } }).expect(201);
});
afterAll(() => t.close());

const list = (params: { [k: string]: unknown }) => api.get(`/collections/posts/records${qs(params)}`);

describe('contains and starts-with in where', () => {
  it('match ignoring ASCII case; % and _ are plain characters', async () => {
    expect(titles(await list({ where: [['title', 'contains', 'RUST']] }))).toEqual(['Rust for beginners', 'Advanced Rust']);
    expect(titles(await list({ where: [['title', 'starts-with', 'go f']] }))).toEqual(['Go for beginners']);
    expect(titles(await list({ where: [['title', 'contains', '100%']] }))).toEqual(['The 100% guide_to SQL']);
    expect(titles(await list({ where: [['title', 'contains', '100_']] }))).toEqual([]);
    expect(titles(await list({ where: [['title', 'contains', 'e_t']] }))).toEqual(['The 100% guide_to SQL']);
  });

  const BAD: Array<[string, unknown, { [k: string]: unknown }]> = [
    ['contains on an integer field', [['n', 'contains', '1']], { field: 'n', op: 'contains' }],
    ['starts-with on a list field', [['tags', 'starts-with', 'x']], { field: 'tags', op: 'starts-with' }],
    ['a number operand', [['title', 'contains', 1]], { field: 'title', op: 'contains' }],
    ['a null operand', [['title', 'starts-with', null]], { field: 'title', op: 'starts-with' }],
    ['an operand over 500 characters', [['title', 'contains', 'a'.repeat(501)]], { field: 'title', op: 'contains', max: 500 }],
    ['an operator object', [['title', 'contains', { $regex: '.*' }]], { field: 'title', op: 'contains' }],
  ];
  it.each(BAD)('refuses %s → 400 naming it', async (_label, where, details) => {
    const res = await list({ where });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', details: { parameter: 'where', ...details } });
  });
});

describe('?search=', () => {
  it('finds every word in the searchable fields, best match first, never in other fields', async () => {
    const res = await list({ search: 'rust' });
    expect(res.status).toBe(200);
    expect(titles(res)[0]).toBe('Advanced Rust');
    expect(titles(res).sort()).toEqual(['Advanced Rust', 'Rust for beginners', 'The 100% guide_to SQL']);
    expect(titles(await list({ search: 'RUST beginners' }))).toEqual(['Rust for beginners']);
    expect(titles(await list({ search: 'cooking code' }))).toEqual(['Cooking']);
  });

  it('with where, an orderBy, a count and pages', async () => {
    expect(titles(await list({ search: 'rust', where: [['n', '>', 1]], orderBy: 'n', direction: 'desc' }))).toEqual(['The 100% guide_to SQL', 'Advanced Rust']);
    const first = await list({ search: 'explained', limit: 1, count: true });
    expect(first.body.total).toBe(2);
    expect(first.body.cursor).toEqual(expect.any(String));
    const second = await list({ search: 'explained', limit: 1, cursor: first.body.cursor });
    expect(second.body.cursor).toBeNull();
    expect([...titles(first), ...titles(second)].sort()).toEqual(['Rust for beginners', 'The 100% guide_to SQL']);
    // The cursor belongs to this search only.
    expect((await list({ search: 'rust', cursor: first.body.cursor })).body.details).toEqual({ parameter: 'cursor' });
  });

  it('takes query syntax as plain words', async () => {
    for (const search of ['rust*', '"rust"', 'rust OR go', 'title:rust', 'NEAR(rust go)', '-go rust']) {
      const res = await list({ search });
      expect(res.status).toBe(200);
    }
    expect(titles(await list({ search: 'rust OR go' }))).toEqual([]);
    expect(titles(await list({ search: '"beginners" -go' })).sort()).toEqual(['Go for beginners']);
  });

  const BAD: Array<[string, string, { [k: string]: unknown }]> = [
    ['no word at all', '*** "" ()', { parameter: 'search' }],
    ['more than 8 words', 'a b c d e f g h i', { parameter: 'search', max: 8 }],
    ['a word over 64 characters', 'x'.repeat(65), { parameter: 'search', max: 64 }],
    ['over 256 characters', 'ab '.repeat(90), { parameter: 'search', max: 256 }],
  ];
  it.each(BAD)('refuses %s → 400 naming search', async (_label, search, details) => {
    const res = await list({ search });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', details });
  });

  it('a ranked cursor reaches the first 10 000 matches; a forged position is a 400', async () => {
    const first = await list({ search: 'explained', limit: 1 });
    const body = JSON.parse(Buffer.from(first.body.cursor as string, 'base64url').toString('utf8')) as { v: unknown };
    const forged = (v: unknown) => Buffer.from(JSON.stringify({ ...body, v })).toString('base64url');
    for (const v of [10_001, -1, 1.5, 'x', null]) {
      const res = await list({ search: 'explained', cursor: forged(v) });
      expect(res.status).toBe(400);
      expect(res.body.details).toMatchObject({ parameter: 'cursor' });
    }
    const deep = await list({ search: 'explained', cursor: forged(10_000) });
    expect(deep.status).toBe(200);
    expect(deep.body).toEqual({ records: [], cursor: null });
  });

  it('the relevance order exists only with a search', async () => {
    const res = await list({ orderBy: '@rank' });
    expect(res.status).toBe(400);
    expect(res.body.details).toMatchObject({ parameter: 'orderBy', field: '@rank' });
    expect((await list({ orderBy: '@rank', search: 'rust' })).status).toBe(200);
  });

  it('on a collection with no searchable field → 400', async () => {
    const res = await api.get(`/collections/plain/records${qs({ search: 'rust' })}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', details: { parameter: 'search' } });
  });

  it('searchable only on text fields; shown only when set; a PATCH makes a field searchable', async () => {
    const res = await api.post('/collections', { name: 'bad', fields: { n: { type: 'integer', searchable: true } } });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({ field: 'n', key: 'searchable' });
    const shown = await api.get('/collections/posts');
    expect(shown.body.collection.fields.title).toMatchObject({ type: 'text', searchable: true });
    expect(shown.body.collection.fields.owner).not.toHaveProperty('searchable');
    await api.post('/collections/plain/records', { data: { title: 'late bloomer' } }).expect(201);
    await api.patch('/collections/plain', { fields: { title: { type: 'text', searchable: true } } }).expect(200);
    expect(titles(await api.get(`/collections/plain/records${qs({ search: 'bloomer' })}`))).toEqual(['late bloomer']);
  });

  it("a user's search, count and sum are those of what the user can list", async () => {
    const signUp = async (email: string) => {
      const r = await request(t.app).post(at('/auth/signup')).set('Authorization', `Bearer ${t.project.publicKey}`).send({ email, password: 'text search over http password' });
      expect(r.status).toBe(201);
      return { uid: r.body.user.id as string, token: r.body.access_token as string };
    };
    await api.patch('/settings/auth', { enabled: true }).expect(200);
    const ann = await signUp('ann@example.com');
    const add = (title: string, n: number) =>
      request(t.app).post(at('/collections/posts/records')).set('Authorization', `Bearer ${t.project.publicKey}`).set('X-Db-User-Token', ann.token)
        .send({ data: { title, owner: ann.uid, n } }).expect(201);
    await add('rust notes', 10);
    await add('more Rust', 20);
    await add('gardening', 40);
    const asAnn = (path: string) => request(t.app).get(at(path)).set('Authorization', `Bearer ${t.project.publicKey}`).set('X-Db-User-Token', ann.token);
    const listed = await asAnn(`/collections/posts/records${qs({ search: 'rust', count: true })}`);
    expect(titles(listed).sort()).toEqual(['more Rust', 'rust notes']);
    expect(listed.body.total).toBe(2);
    const searched = await asAnn(`/collections/posts/aggregate${qs({ search: 'rust', count: true, sum: 'n' })}`);
    expect(searched.body).toEqual({ count: 2, sum: { n: 30 } });
    const byWhere = await asAnn(`/collections/posts/aggregate${qs({ where: [['title', 'contains', 'rust']], count: true, sum: 'n' })}`);
    expect(byWhere.body).toEqual({ count: 2, sum: { n: 30 } });
    const listedByWhere = await asAnn(`/collections/posts/records${qs({ where: [['title', 'contains', 'rust']] })}`);
    expect((listedByWhere.body.records as Rec[]).reduce((s, r) => s + (r.n ?? 0), 0)).toBe(30);
    // Anonymous: refused as a list is.
    const anon = await request(t.app).get(at(`/collections/posts/records${qs({ search: 'rust' })}`)).set('Authorization', `Bearer ${t.project.publicKey}`);
    expect(anon.status).toBe(403);
  });
});
