/** What the file suites send: small PNGs, a decompression bomb, multipart bodies streamed from generators. */
import http from 'node:http';
import zlib from 'node:zlib';
import sharp from 'sharp';

export async function png(width: number, height: number, background = '#3a6'): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background } }).png().toBuffer();
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A PNG of a few KB whose header declares `w`×`h` gray pixels (a decompression bomb). */
export function pngBomb(w: number, h: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8;
  ihdr[9] = 0;
  const rows = zlib.deflateSync(Buffer.alloc((w + 1) * 4));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', rows), chunk('IEND', Buffer.alloc(0))]);
}

export interface StreamedUpload {
  status: number;
  body: string;
  /** Bytes of the body the client managed to write before the server answered or cut it off. */
  written: number;
}

/**
 * A multipart record create whose one file is `fileBytes` long, generated as it is sent (never in
 * memory): its first bytes `head`, then zeros. Sent over real HTTP with its exact Content-Length.
 */
export function streamUpload(url: string, headers: { [k: string]: string }, data: object, field: string, head: Buffer, fileBytes: number): Promise<StreamedUpload> {
  const boundary = `----plinth${Math.random().toString(16).slice(2)}`;
  const pre = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="data"\r\n\r\n${JSON.stringify(data)}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const post = Buffer.from(`\r\n--${boundary}--\r\n`);
  const length = pre.length + fileBytes + post.length;
  return new Promise((resolve, reject) => {
    let written = 0;
    let answered: { status: number; body: string } | null = null;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      if (answered) resolve({ ...answered, written });
      else reject(new Error(`no answer after ${written} bytes`));
    };
    const req = http.request(url, { method: 'POST', headers: { ...headers, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': String(length) } });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        answered = { status: res.statusCode ?? 0, body };
        req.destroy();
        finish();
      });
      res.on('error', finish);
    });
    req.on('error', () => setTimeout(finish, 50));
    req.on('close', () => setTimeout(finish, 50));
    const zeros = Buffer.alloc(256 * 1024);
    let sent = 0;
    const pump = (): void => {
      if (written === 0) {
        req.write(pre);
        req.write(head);
        written = pre.length + head.length;
        sent = head.length;
      }
      while (sent < fileBytes && !done && !req.destroyed) {
        const n = Math.min(zeros.length, fileBytes - sent);
        sent += n;
        written += n;
        if (!req.write(n === zeros.length ? zeros : zeros.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      if (sent >= fileBytes && !req.destroyed) req.end(post);
    };
    pump();
  });
}
