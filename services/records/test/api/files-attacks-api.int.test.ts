/**
 * What a hostile upload or download cannot do, through the gateway in both topologies
 * (docs/files.md): pass HTML off as an image, be served as a page, make the server read a body
 * past a field's limit or hold uploads in memory, decode a decompression bomb, or name a path.
 */
import fs from 'node:fs';
import http from 'node:http';
import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { png, pngBomb, streamUpload } from '../files/file-fixtures';

let t: TestPlinth;
let base: string;
const at = (p: string): string => `/v1/projects/${t.project.id}${p}`;
const secret = (): { Authorization: string } => ({ Authorization: `Bearer ${t.project.secretKey}` });
const MB = 1024 * 1024;
/** Each of the 50 concurrent uploads (PLINTH_TEST_CONCURRENT_UPLOAD_MB; 100 by default). */
const CONCURRENT_MB = Number(process.env.PLINTH_TEST_CONCURRENT_UPLOAD_MB ?? 100);

/** Resident memory of each process that holds uploads: this one (standalone), or the gateway and each records replica (cluster). */
function rss(): Map<string, number> {
  const out = new Map<string, number>();
  if (!t.cluster) return out.set('standalone', process.memoryUsage().rss);
  for (const p of t.cluster.processes) {
    if (!/^(gateway|records)/.test(p.name) || p.child.pid === undefined) continue;
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${p.child.pid}/status`, 'utf8'));
    out.set(p.name, Number(m?.[1] ?? 0) * 1024);
  }
  return out;
}

/** The highest RSS of each process while `work` runs, sampled every 20 ms. */
async function peakRss<T>(work: () => Promise<T>): Promise<{ result: T; peak: Map<string, number> }> {
  const peak = rss();
  const sample = (): void => {
    for (const [name, bytes] of rss()) peak.set(name, Math.max(peak.get(name) ?? 0, bytes));
  };
  const timer = setInterval(sample, 20);
  try {
    const result = await work();
    sample();
    return { result, peak };
  } finally {
    clearInterval(timer);
  }
}

beforeAll(async () => {
  t = await startTestPlinth();
  base = await t.url();
  const made = await request(t.app)
    .post(at('/collections'))
    .set(secret())
    .send({
      name: 'uploads',
      fields: {
        image: { type: 'file', mime_types: ['image/png'], thumbs: ['100x100'] },
        doc: { type: 'file', max_size: 5 * MB },
        blob: { type: 'file', max_size: 200 * MB },
      },
      rules: { read: 'true' },
    });
  expect(made.status).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

function create(files: Array<[field: string, bytes: Buffer, name: string]>) {
  let r = request(t.app).post(at('/collections/uploads/records')).set(secret()).field('data', '{}');
  for (const [field, bytes, name] of files) r = r.attach(field, bytes, { filename: name, contentType: 'image/png' });
  return r;
}

describe('attacks', () => {
  it('refuses HTML declared as image/png where only PNGs are allowed (the type is read from the bytes)', async () => {
    const res = await create([['image', Buffer.from('<!doctype html><html><script>alert(1)</script></html>'), 'cat.png']]);
    expect(res.status).toBe(400);
    expect(res.body.details).toMatchObject({ field: 'image', type: 'text/html' });
  });

  it('serves an uploaded HTML page and an SVG with script as attachments under a sandbox CSP', async () => {
    const html = Buffer.from('<html><body><script>fetch("/pwned")</script></body></html>');
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("/pwned")</script></svg>');
    for (const [bytes, type] of [[html, 'text/html'], [svg, 'image/svg+xml']] as const) {
      const made = await create([['doc', bytes, 'page.png']]);
      expect(made.status).toBe(201);
      expect(made.body.record.doc.type).toBe(type);
      const got = await request(t.app).get(at(`/files/uploads/${made.body.record.id}/${made.body.record.doc.name}`)).set(secret());
      expect(got.status).toBe(200);
      expect(got.headers['content-disposition']).toMatch(/^attachment; /);
      expect(got.headers['content-security-policy']).toMatch(/^sandbox; default-src 'none'/);
      expect(got.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('stops reading a 1 GB upload against a 5 MB limit at about 5 MB: 413, the client cut off, memory bounded', async () => {
    const before = rss();
    const { result, peak } = await peakRss(() => streamUpload(`${base}${at('/collections/uploads/records')}`, secret(), {}, 'doc', Buffer.from('plain text\n'), 1024 * MB));
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body).error).toBe('payload_too_large');
    // What the client wrote before being cut off: the limit and what socket buffers took, far from 1 GB.
    expect(result.written).toBeLessThan(64 * MB);
    for (const [name, bytes] of before) expect([name, (peak.get(name) ?? 0) - bytes < 64 * MB]).toEqual([name, true]);
  });

  it('refuses a thumbnail of a decompression-bomb PNG with 400', async () => {
    const bomb = pngBomb(15_000, 15_000);
    const made = await create([['image', bomb, 'bomb.png']]);
    expect(made.status).toBe(201);
    const thumb = await request(t.app).get(at(`/files/uploads/${made.body.record.id}/${made.body.record.image.name}?thumb=100x100`)).set(secret());
    expect(thumb.status).toBe(400);
    expect(thumb.body.message).toMatch(/pixel limit/);
  });

  it('refuses path traversal in names with 400 and keeps nothing of a client path', async () => {
    const made = await create([['doc', Buffer.from('root:x:0:0\n'), '../../etc/passwd']]);
    expect(made.status).toBe(201);
    expect(made.body.record.doc.name).toMatch(/^passwd_[a-z0-9]{10}\.txt$/);
    const id = made.body.record.id as string;
    for (const name of ['..%2F..%2Fetc%2Fpasswd', '..', '.passwd_aaaaaaaaaa.txt', 'passwd_aaaaaaaaaa.txt%00.png']) {
      const res = await new Promise<number>((resolve, reject) => {
        // Sent as written: a URL object would resolve the dot segments before sending.
        const { hostname, port } = new URL(base);
        http.get({ hostname, port, path: at(`/files/uploads/${id}/${name}`), headers: secret() }, (r) => {
          r.resume();
          resolve(r.statusCode ?? 0);
        }).on('error', reject);
      });
      expect([name, res]).toEqual([name, 400]);
    }
  });

  it(`holds 50 concurrent uploads of ${CONCURRENT_MB} MB each with the RSS growth of each server process under 64 MB`, async () => {
    const head = await png(4, 4);
    const url = `${base}${at('/collections/uploads/records')}`;
    const send = (n: number) => Promise.all(Array.from({ length: n }, () => streamUpload(url, secret(), {}, 'blob', head, CONCURRENT_MB * MB)));
    // A first round warms the processes up (code paths, allocator pools), as a running server is.
    expect((await send(10)).map((r) => r.status)).toEqual(Array(10).fill(201));
    const before = rss();
    const { result, peak } = await peakRss(() => send(50));
    expect(result.map((r) => r.status)).toEqual(Array(50).fill(201));
    expect(result.map((r) => JSON.parse(r.body).record.blob.size)).toEqual(Array(50).fill(CONCURRENT_MB * MB));
    for (const [name, bytes] of before) expect([name, (peak.get(name) ?? 0) - bytes < 64 * MB]).toEqual([name, true]);
    // 6 GB pass through the gateway and the records process (twice over loopback in the cluster
    // topology): on two shared cores that takes longer than a default test's 30 s.
  }, 180_000);
});
