/**
 * Multipart record writes as they arrive over real HTTP: files streamed into storage with their
 * type read from the bytes, limits enforced while the body arrives, and nothing left behind
 * when a request is refused.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { closeAfterResponse, PlinthError } from '@plinth/shared';
import { parseFileField, type FileFieldOptions } from '../../src/files/file-field';
import { readMultipartUpload, type ParsedUpload } from '../../src/files/multipart-upload';
import { DiskFileStorage } from '../../src/files/storage/disk-file-storage';
import { fileKey } from '../../src/files/storage/file-storage';
import { readAll } from './file-storage.contract';

const MiB = 1024 * 1024;
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 7)]);
const BOUNDARY = '----plinthtest7d2f';

const FIELDS: { [name: string]: FileFieldOptions } = {
  avatar: parseFileField('avatar', { type: 'file', max_size: 5 * MiB, mime_types: ['image/png', 'image/jpeg'] }),
  docs: parseFileField('docs', { type: 'files', max_items: 2 }),
};

let root: string;
let storage: DiskFileStorage;
let server: http.Server;
let url: string;
let serverRead = 0;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'plinth-upload-'));
  storage = await new DiskFileStorage(root).init();
  server = http.createServer((req, res) => {
    serverRead = 0;
    req.on('data', (c: Buffer) => (serverRead += c.length));
    readMultipartUpload(req, storage, { field: (n) => FIELDS[n] ?? null, keyOf: (name) => fileKey('p1', 'posts', name) }).then(
      (r) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(r)),
      (err: unknown) => {
        closeAfterResponse(res);
        const e = err instanceof PlinthError ? err : null;
        res.writeHead(e?.status ?? 500, { 'content-type': 'application/json' }).end(JSON.stringify(e?.toEnvelope() ?? { error: 'internal', message: String(err) }));
      },
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await fs.rm(root, { recursive: true, force: true });
});

type Part = { name: string; filename?: string; type?: string; body: Buffer | AsyncIterable<Buffer> };

async function* multipart(parts: Part[]): AsyncGenerator<Buffer> {
  for (const p of parts) {
    const disp = p.filename !== undefined ? `form-data; name="${p.name}"; filename="${p.filename}"` : `form-data; name="${p.name}"`;
    yield Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disp}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`);
    if (Buffer.isBuffer(p.body)) yield p.body;
    else yield* p.body;
    yield Buffer.from('\r\n');
  }
  yield Buffer.from(`--${BOUNDARY}--\r\n`);
}

/** Posts a streamed body; stops writing once the server answers or drops the connection. */
function post(parts: Part[]): Promise<{ status: number; body: { [k: string]: unknown }; written: number }> {
  return new Promise((resolve, reject) => {
    let written = 0;
    let answered = false;
    const req = http.request(url, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || '{}'), written }));
    });
    req.on('error', (err) => (answered ? undefined : reject(err)));
    (async () => {
      for await (const chunk of multipart(parts)) {
        if (answered || req.destroyed) return;
        written += chunk.length;
        if (!req.write(chunk)) {
          await new Promise<void>((r) => {
            const go = (): void => {
              req.off('drain', go);
              req.off('close', go);
              r();
            };
            req.on('drain', go);
            req.on('close', go);
          });
        }
      }
      req.end();
    })().catch(() => undefined);
  });
}

async function* huge(total: number): AsyncGenerator<Buffer> {
  const chunk = Buffer.alloc(64 * 1024, 0x41);
  for (let at = 0; at < total; at += chunk.length) yield chunk;
}

async function stored(): Promise<string[]> {
  const out: string[] = [];
  for await (const o of storage.list(fileKey('p1'))) out.push(o.key);
  return out;
}

afterEach(async () => {
  await storage.deletePrefix(fileKey('p1'));
});

describe('multipart record writes', () => {
  it('stores each file under a generated name, with its size, type from the bytes and SHA-256', async () => {
    const r = await post([
      { name: 'data', body: Buffer.from(JSON.stringify({ title: 'hello' })) },
      { name: 'avatar', filename: 'Me at the beach.PNG', type: 'image/png', body: PNG },
      { name: 'docs', filename: 'notes.txt', type: 'application/octet-stream', body: Buffer.from('plain words') },
    ]);
    expect(r.status).toBe(200);
    const upload = r.body as unknown as ParsedUpload;
    expect(upload.data).toEqual({ title: 'hello' });
    expect(upload.files.avatar).toEqual([expect.objectContaining({ original_name: 'Me at the beach.PNG', size: PNG.length, type: 'image/png' })]);
    expect(upload.files.avatar[0].name).toMatch(/^me_at_the_beach_[a-z0-9]{10}\.png$/);
    expect(upload.files.docs[0]).toMatchObject({ type: 'text/plain', size: 11 });
    expect(await readAll(await storage.get(fileKey('p1', 'posts', upload.files.avatar[0].name)))).toEqual(PNG);
  });

  it('refuses a file declared image/png that holds HTML (400) and stores nothing', async () => {
    const r = await post([{ name: 'avatar', filename: 'x.png', type: 'image/png', body: Buffer.from('<!DOCTYPE html><script>alert(1)</script>') }]);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'invalid_request', details: { field: 'avatar', type: 'text/html' } });
    expect(await stored()).toEqual([]);
  });

  it('a 1 GB upload against a 5 MB limit is refused (413) after about 5 MB read, with bounded memory', async () => {
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    const r = await post([{ name: 'avatar', filename: 'big.png', body: (async function* () { yield PNG; yield* huge(1024 * MiB); })() }]);
    clearInterval(sampler);
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ error: 'payload_too_large' });
    expect(serverRead).toBeLessThan(5 * MiB + 2 * MiB);
    expect(r.written).toBeLessThan(64 * MiB);
    expect(peak - before).toBeLessThan(100 * MiB);
    expect(await stored()).toEqual([]);
  });

  it('a client path in the file name never reaches storage', async () => {
    const r = await post([{ name: 'docs', filename: '../../../etc/passwd', body: Buffer.from('root:x:0:0') }]);
    expect(r.status).toBe(200);
    const name = (r.body as unknown as ParsedUpload).files.docs[0].name;
    expect(name).toMatch(/^passwd_[a-z0-9]{10}\.txt$/);
    expect(await stored()).toEqual([`p1/posts/${name}`]);
  });

  it('refuses a part that is not a file field, too many files for a field, and a data part that is not a JSON object', async () => {
    expect((await post([{ name: 'nope', filename: 'a.txt', body: Buffer.from('a') }])).status).toBe(400);
    const three = [1, 2, 3].map((i) => ({ name: 'docs', filename: `${i}.txt`, body: Buffer.from(`doc ${i}`) }));
    expect((await post(three)).status).toBe(400);
    expect((await post([{ name: 'data', body: Buffer.from('[1,2]') }])).status).toBe(400);
    expect(await stored()).toEqual([]);
  });
});
