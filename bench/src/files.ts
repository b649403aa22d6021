import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { formatTable, load, ratio, type LoadResult } from './load';
import { runEntry } from './processes';
import { createProjectAndCollection } from './records';

/**
 * Files (docs/files.md): a 100 MB download and upload through the gateway (standalone ×1, disk
 * storage) beside a bare node:http server streaming the same file from the same disk in the same
 * run (targets: ≥ 0.5× its MB/s), and 10 kB downloads by file token (`?token=`, as an `<img>`
 * sends them; target 1,000/s). A token read as an anonymous caller, so the collection's read rule
 * is `true` (a public gallery). Each transfer runs 3 times, bare and gateway alternating; the median counts.
 */
const PROJECT = 'bench';
const BIG = 100 * 1024 * 1024;
const SMALL = 10 * 1024;
const RUNS = 3;
const BOUNDARY = '----plinthbench7d2f';
/**
 * A download by token carries no key, so it counts as an anonymous caller: against its client
 * address (600/min by default) and the project's anonymous ceiling. One load generator is one
 * address; the limits are lifted so that the bench measures serving, not the limiter.
 */
const LIMITS = { PLINTH_RATE_LIMIT_SECRET_KEY: '1000000000', PLINTH_RATE_LIMIT_PUBLIC_KEY: '1000000000', PLINTH_RATE_LIMIT_ANONYMOUS: '999999999', PLINTH_RATE_LIMIT_ADDRESS: '999999999' };

interface Transfer {
  name: string;
  mbps: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/** Downloads `url` to nowhere; MB/s of the body (1 MB = 2^20 bytes). */
async function download(url: string, headers: Record<string, string>): Promise<number> {
  const start = process.hrtime.bigint();
  const bytes = await new Promise<number>((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`GET ${url}: ${res.statusCode}`));
        let n = 0;
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () => resolve(n));
        res.on('error', reject);
      })
      .on('error', reject);
  });
  if (bytes !== BIG) throw new Error(`GET ${url}: ${bytes} bytes`);
  return bytes / 2 ** 20 / (Number(process.hrtime.bigint() - start) / 1e9);
}

/** Sends `file` as the body (optionally framed by `before`/`after`); MB/s of the file and the answer. */
async function upload(url: string, method: string, headers: Record<string, string>, file: string, before = '', after = ''): Promise<{ mbps: number; body: string }> {
  const start = process.hrtime.bigint();
  const length = Buffer.byteLength(before) + fs.statSync(file).size + Buffer.byteLength(after);
  const body = await new Promise<string>((resolve, reject) => {
    const req = http.request(url, { method, headers: { ...headers, 'Content-Length': String(length) } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => (res.statusCode! < 300 ? resolve(text) : reject(new Error(`${method} ${url}: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.write(before);
    pipeline(fs.createReadStream(file), req, { end: false })
      .then(() => req.end(after))
      .catch(reject);
  });
  return { mbps: BIG / 2 ** 20 / (Number(process.hrtime.bigint() - start) / 1e9), body };
}

function multipartFraming(field: string, filename: string): { before: string; after: string; type: string } {
  return {
    before: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="data"\r\n\r\n{}\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    after: `\r\n--${BOUNDARY}--\r\n`,
    type: `multipart/form-data; boundary=${BOUNDARY}`,
  };
}

async function api(url: string, secret: string, method: string, p: string, body: unknown): Promise<{ [k: string]: unknown }> {
  const res = await fetch(`${url}/v1/projects/${PROJECT}${p}`, { method, headers: { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { [k: string]: unknown };
}

export async function benchFiles(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-files-'));
  const big = path.join(dir, 'big.bin');
  const small = path.join(dir, 'small.bin');
  const transfers: Transfer[] = [];
  const loads: LoadResult[] = [];
  try {
    const fd = fs.openSync(big, 'w');
    for (let i = 0; i < BIG / 2 ** 20; i++) fs.writeSync(fd, randomBytes(2 ** 20));
    fs.closeSync(fd);
    fs.writeFileSync(small, randomBytes(SMALL));

    // Both servers stay up and the transfers alternate (bare, gateway, bare, …), so that the
    // drift of a shared machine's speed over the minutes of a run falls on both alike.
    const bare = await runEntry('bench/dist/bare-file-server.js', { FILE: big, SMALL: small, DIR: dir });
    const dataDir = path.join(dir, 'plinth');
    fs.mkdirSync(dataDir);
    const adminKey = `adm_${randomBytes(24).toString('hex')}`;
    let server: Awaited<ReturnType<typeof runEntry>> | null = null;
    try {
      server = await runEntry('gateway/dist/standalone.js', { PLINTH_DATA_DIR: dataDir, PLINTH_ADMIN_KEY: adminKey, PLINTH_WORKERS: '1', ...LIMITS });
      const secret = await createProjectAndCollection(server.url, adminKey);
      await api(server.url, secret, 'POST', '/collections', { name: 'blobs', fields: { doc: { type: 'file', max_size: 2 * BIG } }, rules: { read: 'true' } });
      const auth = { Authorization: `Bearer ${secret}` };
      const records = `${server.url}/v1/projects/${PROJECT}/collections/blobs/records`;
      const framing = multipartFraming('doc', 'big.bin');
      const runs = { bareDown: [] as number[], bareUp: [] as number[], gwDown: [] as number[], gwUp: [] as number[] };
      for (let r = 0; r < RUNS; r++) {
        runs.bareUp.push((await upload(`${bare.url}/upload`, 'PUT', {}, big)).mbps);
        const sent = await upload(records, 'POST', { ...auth, 'Content-Type': framing.type }, big, framing.before, framing.after);
        runs.gwUp.push(sent.mbps);
        const record = (JSON.parse(sent.body) as { record: { id: string; doc: { name: string; size: number } } }).record;
        if (record.doc.size !== BIG) throw new Error(`stored ${record.doc.size} bytes`);
        runs.bareDown.push(await download(`${bare.url}/file`, {}));
        runs.gwDown.push(await download(`${server.url}/v1/projects/${PROJECT}/files/blobs/${record.id}/${record.doc.name}`, auth));
        await api(server.url, secret, 'DELETE', `/collections/blobs/records/${record.id}`, undefined);
      }
      transfers.push(
        { name: 'node:http: 100 MB download', mbps: median(runs.bareDown) },
        { name: 'node:http: 100 MB upload (hashed, fsync)', mbps: median(runs.bareUp) },
        { name: 'gateway: 100 MB download', mbps: median(runs.gwDown) },
        { name: 'gateway: 100 MB upload (multipart create)', mbps: median(runs.gwUp) },
      );

      const smallFraming = multipartFraming('doc', 'small.bin');
      const res = await fetch(records, { method: 'POST', headers: { ...auth, 'Content-Type': smallFraming.type }, body: Buffer.concat([Buffer.from(smallFraming.before), fs.readFileSync(small), Buffer.from(smallFraming.after)]) });
      const record = ((await res.json()) as { record: { id: string; doc: { name: string } } }).record;
      const { token } = (await api(server.url, secret, 'POST', '/files/token', {})) as { token: string };
      const file = `${server.url}/v1/projects/${PROJECT}/files/blobs/${record.id}/${record.doc.name}`;
      loads.push(await load('node:http: 10 kB download', { url: `${bare.url}/small` }));
      loads.push(await load('gateway: 10 kB download by ?token=', { url: `${file}?token=${encodeURIComponent(token)}` }));
      // For scale, in the same minute: the same download with the key, and the record's JSON.
      loads.push(await load('gateway: 10 kB download by secret key', { url: file, headers: auth }));
      loads.push(await load('gateway: get the record (JSON)', { url: `${records}/${record.id}`, headers: auth }));
    } finally {
      await server?.stop();
      await bare.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const [bareDown, bareUp, gwDown, gwUp] = transfers as [Transfer, Transfer, Transfer, Transfer];
  const [bareSmall, gwSmall, , recordGet] = loads as [LoadResult, LoadResult, LoadResult, LoadResult];
  return [
    '## Files: 100 MB through the gateway vs node:http, and 10 kB downloads by token (standalone ×1, disk storage)',
    '',
    ['transfer (median of 3)                     MB/s', ...transfers.map((t) => `${t.name.padEnd(42)} ${t.mbps.toFixed(0).padStart(5)}`)].join('\n'),
    '',
    formatTable(loads),
    '',
    `gateway / node:http: download ${(gwDown.mbps / bareDown.mbps).toFixed(2)}×, upload ${(gwUp.mbps / bareUp.mbps).toFixed(2)}× (target ≥ 0.5×)`,
    `10 kB by token: ${gwSmall.rps.toFixed(0)}/s (target 1,000/s), ${ratio(gwSmall, bareSmall)}× node:http, ${ratio(gwSmall, recordGet)}× a record get`,
  ].join('\n');
}
