import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

/**
 * The floor for the files benchmark: node:http streaming the same file from disk (GET /file, GET /small),
 * and taking an upload to disk as the disk storage does — hashed while it arrives, fsync'd
 * (PUT /upload), with nothing else in between. Run as its own process; FILE and DIR set by the
 * bench.
 */
const file = process.env.FILE ?? '';
const small = process.env.SMALL ?? '';
const dir = process.env.DIR ?? '';
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') return void res.writeHead(200).end('ok');
  if (req.method === 'GET' && (req.url === '/file' || req.url === '/small')) {
    const which = req.url === '/file' ? file : small;
    const size = fs.statSync(which).size;
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': size });
    fs.createReadStream(which).pipe(res);
    return;
  }
  if (req.method === 'PUT' && req.url === '/upload') {
    const target = path.join(dir, `upload-${crypto.randomUUID()}`);
    const hash = crypto.createHash('sha256');
    req.on('data', (c: Buffer) => hash.update(c));
    const out = fs.createWriteStream(target);
    pipeline(req, out)
      .then(() => fs.promises.open(target, 'r+'))
      .then(async (fh) => {
        await fh.sync();
        await fh.close();
        const size = (await fs.promises.stat(target)).size;
        await fs.promises.rm(target);
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ size, sha256: hash.digest('hex') }));
      })
      .catch((err: unknown) => res.writeHead(500).end(String(err)));
    return;
  }
  res.writeHead(404).end();
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : ''}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
