/** Downloads over real HTTP: streaming, ranges, ETags and the headers on every file response. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { asProjectId } from '@plinth/shared';
import type { FileMeta } from '../../src/files/file-field';
import { issueFileToken, verifyFileToken } from '../../src/files/file-token';
import { parseRange, sendFile } from '../../src/files/serve-file';
import { DiskFileStorage } from '../../src/files/storage/disk-file-storage';
import { fileKey } from '../../src/files/storage/file-storage';
import { pattern } from './file-storage.contract';

let root: string;
let storage: DiskFileStorage;
let server: http.Server;
let base: string;
const files = new Map<string, FileMeta>();

async function add(name: string, type: string, bytes: Buffer): Promise<void> {
  const obj = await storage.put(fileKey('p1', 'posts', name), [bytes], { maxBytes: 10 * 1024 * 1024 });
  files.set(name, { name, original_name: name, type, size: obj.size, sha256: obj.sha256, created_at: new Date().toISOString() });
}

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'plinth-serve-'));
  storage = await new DiskFileStorage(root).init();
  await add('photo_aaaaaaaaaa.png', 'image/png', pattern(100_000));
  await add('page_bbbbbbbbbb.html', 'text/html', Buffer.from('<script>fetch("/pwned")</script>'));
  await add('logo_cccccccccc.svg', 'image/svg+xml', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("/pwned")</script></svg>'));
  server = http.createServer((req, res) => {
    const name = (req.url ?? '').slice(1);
    const meta = files.get(name);
    if (!meta) return void res.writeHead(404).end();
    void sendFile(req, res, storage, fileKey('p1', 'posts', name), meta);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await fs.rm(root, { recursive: true, force: true });
});

describe('sendFile', () => {
  it('streams the whole file with its length, a strong ETag and the security headers', async () => {
    const r = await fetch(`${base}/photo_aaaaaaaaaa.png`);
    expect(r.status).toBe(200);
    const body = Buffer.from(await r.arrayBuffer());
    expect(createHash('sha256').update(body).digest('hex')).toBe(files.get('photo_aaaaaaaaaa.png')?.sha256);
    expect(r.headers.get('content-length')).toBe('100000');
    expect(r.headers.get('content-type')).toBe('image/png');
    expect(r.headers.get('content-disposition')).toBe('inline; filename="photo_aaaaaaaaaa.png"');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('content-security-policy')).toMatch(/^sandbox;/);
    expect(r.headers.get('etag')).toMatch(/^"[0-9a-f]{40}"$/);
  });

  it('serves HTML and SVG as attachments, under the sandbox CSP', async () => {
    for (const name of ['page_bbbbbbbbbb.html', 'logo_cccccccccc.svg']) {
      const r = await fetch(`${base}/${name}`);
      expect(r.headers.get('content-disposition')).toBe(`attachment; filename="${name}"`);
      expect(r.headers.get('content-security-policy')).toMatch(/^sandbox;/);
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const etag = (await fetch(`${base}/photo_aaaaaaaaaa.png`)).headers.get('etag') as string;
    const r = await fetch(`${base}/photo_aaaaaaaaaa.png`, { headers: { 'if-none-match': etag } });
    expect(r.status).toBe(304);
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('serves one byte range (206), a suffix range, and 416 outside the file', async () => {
    const all = pattern(100_000);
    const r = await fetch(`${base}/photo_aaaaaaaaaa.png`, { headers: { range: 'bytes=10-19' } });
    expect(r.status).toBe(206);
    expect(r.headers.get('content-range')).toBe('bytes 10-19/100000');
    expect(Buffer.from(await r.arrayBuffer())).toEqual(all.subarray(10, 20));
    const tail = await fetch(`${base}/photo_aaaaaaaaaa.png`, { headers: { range: 'bytes=-5' } });
    expect(Buffer.from(await tail.arrayBuffer())).toEqual(all.subarray(99_995));
    const out = await fetch(`${base}/photo_aaaaaaaaaa.png`, { headers: { range: 'bytes=100000-' } });
    expect(out.status).toBe(416);
    expect(out.headers.get('content-range')).toBe('bytes */100000');
  });

  it('reads Range headers', () => {
    expect(parseRange('bytes=0-', 10)).toEqual({ kind: 'range', range: { start: 0, end: 9 } });
    expect(parseRange('bytes=5-100', 10)).toEqual({ kind: 'range', range: { start: 5, end: 9 } });
    expect(parseRange('bytes=0-1,4-5', 10)).toEqual({ kind: 'whole' });
    expect(parseRange('items=0-1', 10)).toEqual({ kind: 'whole' });
    expect(parseRange('bytes=-0', 10)).toEqual({ kind: 'unsatisfiable' });
  });
});

describe('file tokens', () => {
  const P = asProjectId('proj-one');
  it('carry the user and session they were issued to, until they expire', () => {
    const { token } = issueFileToken('s3cret', { project: P, uid: 'u1', sid: 's1' }, 1000, 300);
    expect(verifyFileToken('s3cret', token, P, 1299)).toEqual({ project: P, uid: 'u1', sid: 's1', exp: 1300 });
    expect(verifyFileToken('s3cret', token, P, 1300)).toBeNull();
  });
  it('are refused when altered, signed with another secret or shown to another project', () => {
    const { token } = issueFileToken('s3cret', { project: P, uid: 'u1', sid: 's1' }, 1000, 300);
    const [a, payload, sig] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ p: 'proj-one', u: 'admin', s: 's1', e: 1300 })).toString('base64url');
    expect(verifyFileToken('s3cret', `${a}.${forged}.${sig}`, P, 1000)).toBeNull();
    expect(verifyFileToken('other', token, P, 1000)).toBeNull();
    expect(verifyFileToken('s3cret', token, asProjectId('proj-two'), 1000)).toBeNull();
    expect(verifyFileToken('s3cret', `${a}.${payload}`, P, 1000)).toBeNull();
  });
});
