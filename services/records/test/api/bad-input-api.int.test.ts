/**
 * No 500 from client mistakes: each malformed request below is answered 400 (or 415 for a body
 * that is not JSON) with the error envelope, through the real gateway in both topologies.
 */
import http from 'node:http';
import zlib from 'node:zlib';
import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { client, qs, type Client } from './client';

let t: TestPlinth;
let api: Client;

beforeAll(async () => {
  t = await startTestPlinth();
  api = client(t);
  await api.post('/collections', { name: 'things', fields: { title: { type: 'text' }, meta: { type: 'json' } } }).expect(201);
});
afterAll(() => t.close());

const nested = (depth: number): string => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

/** A raw HTTP request (supertest would re-encode the body or the path). */
async function raw(method: string, path: string, headers: { [h: string]: string }, body?: Buffer | string): Promise<{ status: number; body: unknown }> {
  const base = new URL(await t.url());
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: base.hostname, port: base.port, method, path, headers: { Authorization: `Bearer ${t.project.secretKey}`, ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            /* keep the text: the assertion below shows it */
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

const envelope = (code: string) => expect.objectContaining({ error: code, message: expect.any(String) });

describe('no 500 from a client mistake', () => {
  it('%ff in a path → 400', async () => {
    const res = await raw('GET', `/v1/projects/${t.project.id}/collections/things/records/rec_%ff`, {});
    expect(res).toEqual({ status: 400, body: envelope('invalid_request') });
  });

  it('a JSON body nested thousands of levels → 400, on records, collections, subscribe and auth', async () => {
    const body = `{"data":{"meta":${nested(5000)}}}`;
    const paths = ['/collections/things/records', '/collections', '/collections/things/subscribe', '/auth/tokens'];
    for (const path of paths) {
      const res = await raw('POST', `${api.base}${path}`, { 'Content-Type': 'application/json' }, body);
      expect({ path, ...res }).toEqual({ path, status: 400, body: envelope('invalid_request') });
    }
  });

  it.each([
    ['gzip', zlib.gzipSync(Buffer.from('{"data":{"title":"x"}}'))],
    ['deflate', zlib.deflateSync(Buffer.from('{"data":{"title":"x"}}'))],
    ['br', zlib.brotliCompressSync(Buffer.from('{"data":{"title":"x"}}'))],
  ])('a corrupt %s body → 400 (a sound one is accepted)', async (encoding, packed) => {
    const path = `${api.base}/collections/things/records`;
    const ok = await raw('POST', path, { 'Content-Type': 'application/json', 'Content-Encoding': encoding }, packed);
    expect(ok.status).toBe(201);
    const corrupt = Buffer.concat([packed.subarray(0, 6), Buffer.from('garbage-garbage-garbage')]);
    const res = await raw('POST', path, { 'Content-Type': 'application/json', 'Content-Encoding': encoding }, corrupt);
    expect(res).toEqual({ status: 400, body: envelope('invalid_request') });
  });

  it('a body that is not JSON → 415', async () => {
    const res = await raw('POST', `${api.base}/collections/things/records`, { 'Content-Type': 'text/plain' }, 'title=x');
    expect(res).toEqual({ status: 415, body: envelope('unsupported_media_type') });
  });

  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'])('minting a token with a claim named %s → 400 naming it', async (name) => {
    const res = await raw('POST', `${api.base}/auth/tokens`, { 'Content-Type': 'application/json' }, `{"user_id":"u1","claims":{"${name}":"x"}}`);
    expect(res).toEqual({ status: 400, body: envelope('invalid_request') });
    expect(JSON.stringify(res.body)).toContain(name);
    const ok = await raw('POST', `${api.base}/auth/tokens`, { 'Content-Type': 'application/json' }, '{"user_id":"u1","claims":{"role":"x"}}');
    expect(ok.status).toBe(200);
  });

  it('a where nested deep in subscribe → 400', async () => {
    const deep = await raw('POST', `${api.base}/collections/things/subscribe`, { 'Content-Type': 'application/json' }, `{"where":${nested(5000)}}`);
    expect(deep).toEqual({ status: 400, body: envelope('invalid_request') });
    for (const where of [JSON.parse(nested(60)), [['title', '==', JSON.parse(nested(60))]], [['title', 'in', [JSON.parse(nested(60))]]]]) {
      const res = await api.post('/collections/things/subscribe', { where, snapshot: true });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('invalid_request'));
    }
  });

  it('a where nested deep in the query string → 400', async () => {
    const res = await request(t.app).get(`${api.base}/collections/things/records${qs({ where: JSON.parse(nested(1000)) })}`).set('Authorization', `Bearer ${t.project.secretKey}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(envelope('invalid_request'));
  });

  it('a string that is not valid Unicode (a lone surrogate) → 400, in a record, a json field, a where and a rule (MongoDB would store U+FFFD)', async () => {
    const path = `${api.base}/collections/things/records`;
    const rule = await raw('POST', `${api.base}/collections`, { 'Content-Type': 'application/json' }, '{"name":"odd","fields":{},"rules":{"read":"\\"\\ud800\\" == \\"x\\""}}');
    expect(rule).toEqual({ status: 400, body: envelope('invalid_request') });
    const sound = await raw('POST', `${api.base}/collections`, { 'Content-Type': 'application/json' }, '{"name":"odd","fields":{},"rules":{"read":"\\"\\ud83d\\ude00\\" == \\"x\\""}}');
    expect(sound.status).toBe(201);
    for (const body of ['{"data":{"title":"a\\ud800"}}', '{"data":{"meta":{"k\\udc00":1}}}']) {
      const res = await raw('POST', path, { 'Content-Type': 'application/json' }, body);
      expect({ sent: body, ...res }).toEqual({ sent: body, status: 400, body: envelope('invalid_request') });
    }
    const res = await api.get(`/collections/things/records${qs({ where: [['title', '==', 'a\ud800']] })}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(envelope('invalid_request'));
    expect((await raw('POST', path, { 'Content-Type': 'application/json' }, '{"data":{"title":"a\\ud83d\\ude00"}}')).status).toBe(201);
  });
});
