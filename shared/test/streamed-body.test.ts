/**
 * Streamed bodies over the network (docs/architecture.md "Streamed uploads"): a multipart record
 * write is signed for its declared length, not its digest. The chassis accepts such a credential
 * only on a streamed route, only with the signed Content-Length, and once; everything else is 401.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import express from 'express';
import pino from 'pino';
import { INTERNAL_HEADERS, bodyDigest, createServiceApp, isStreamedBody, signInternal, streamedDigest } from '../src';

const SECRET = randomBytes(32).toString('hex');
const RECORDS = '/v1/projects/shop/collections/c/records';
let server: http.Server;
let port: number;

beforeAll(async () => {
  const routes = express.Router();
  // The route reads the stream itself, as records' multipart reader does.
  routes.post('/v1/projects/:p/collections/:c/records', (req, res) => {
    let bytes = 0;
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => res.json({ bytes }));
  });
  routes.post('/v1/projects/:p/other', (req, res) => res.json({ body: req.body as unknown }));
  const app = createServiceApp({
    name: 'streamed',
    internalSecret: SECRET,
    logger: pino({ level: 'silent' }),
    logRequests: false,
    routes,
    streamsBody: (req) => isStreamedBody(req.method, req.originalUrl, req.headers),
  });
  server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

interface Sent {
  path: string;
  body: Buffer;
  contentType: string;
  digest: string;
  chunked?: boolean;
  credential?: string;
}

function send(s: Sent): Promise<{ status: number; body: string; credential: string }> {
  const id = { project: 'shop', keyKind: 'secret' as const, requestId: `r-${randomBytes(4).toString('hex')}` };
  const credential = s.credential ?? signInternal(SECRET, id, { method: 'POST', path: s.path }, s.digest);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: s.path,
      headers: {
        [INTERNAL_HEADERS.project]: id.project,
        [INTERNAL_HEADERS.keyKind]: id.keyKind,
        [INTERNAL_HEADERS.requestId]: id.requestId,
        [INTERNAL_HEADERS.credential]: credential,
        'content-type': s.contentType,
        ...(s.chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(s.body.length) }),
      },
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, credential }));
    });
    req.on('error', reject);
    req.end(s.body);
  });
}

const MULTIPART = 'multipart/form-data; boundary=xyz';
const upload = Buffer.alloc(3 * 1024 * 1024 + 7, 1);

describe('a streamed body signed for its length', () => {
  it('is passed to the route unread when the Content-Length is the signed one, once', async () => {
    const first = await send({ path: RECORDS, body: upload, contentType: MULTIPART, digest: streamedDigest(upload.length) });
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body)).toEqual({ bytes: upload.length });
    const replay = await send({ path: RECORDS, body: upload, contentType: MULTIPART, digest: '', credential: first.credential });
    expect(replay.status).toBe(401);
  });

  it('is refused with another length, chunked, or with the digest of a body', async () => {
    expect((await send({ path: RECORDS, body: upload, contentType: MULTIPART, digest: streamedDigest(upload.length - 1) })).status).toBe(401);
    expect((await send({ path: RECORDS, body: upload, contentType: MULTIPART, digest: streamedDigest(upload.length), chunked: true })).status).toBe(401);
    const small = Buffer.from('--xyz--\r\n');
    expect((await send({ path: RECORDS, body: small, contentType: MULTIPART, digest: bodyDigest(small) })).status).toBe(401);
  });

  it('is never accepted on a route that parses its body', async () => {
    const json = Buffer.from('{"a":1}');
    expect((await send({ path: '/v1/projects/shop/other', body: json, contentType: 'application/json', digest: streamedDigest(json.length) })).status).toBe(401);
    expect((await send({ path: RECORDS, body: json, contentType: 'application/json', digest: streamedDigest(json.length) })).status).toBe(401);
    const ok = await send({ path: '/v1/projects/shop/other', body: json, contentType: 'application/json', digest: bodyDigest(json) });
    expect(JSON.parse(ok.body)).toEqual({ body: { a: 1 } });
  });
});

it('streams exactly the multipart record writes, the parts of a resumable upload and the bytes of an imported file', () => {
  const multipart = { 'content-type': 'multipart/form-data; boundary=x' };
  const raw = { 'content-type': 'application/octet-stream' };
  const cases: Array<[string, string, Record<string, string>, boolean]> = [
    ['POST', RECORDS, multipart, true],
    ['POST', RECORDS, raw, false],
    ['PUT', '/v1/projects/shop/files/uploads/upl_1/parts/3', raw, true],
    ['PUT', '/v1/projects/shop/files/docs/rec_1/report_k3v9x2m4pq.pdf', raw, true],
    ['GET', '/v1/projects/shop/files/docs/rec_1/report_k3v9x2m4pq.pdf', raw, false],
    ['PUT', '/v1/projects/shop/files/docs/rec_1', raw, false],
    ['PUT', '/v1/projects/shop/files/docs/rec_1/a/b', raw, false],
  ];
  expect(cases.map(([m, p, h]) => [m, p, isStreamedBody(m, p, h)])).toEqual(cases.map(([m, p, , want]) => [m, p, want]));
});
