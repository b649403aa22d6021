/**
 * A refused upload's answer reaches a client that is still busy writing its body: the server
 * half-closes after the answer and drops the connection only later, instead of closing with
 * the body unread (which makes the kernel send a reset that discards the answer at the client).
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { closeAfterResponse } from '@plinth/shared';

const MiB = 1024 * 1024;
const LINGER = 400;

let server: http.Server;
let port: number;
let serverRead = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    serverRead = 0;
    req.on('data', (c: Buffer) => {
      serverRead += c.length;
      if (serverRead < MiB || res.headersSent) return;
      req.pause();
      closeAfterResponse(res, LINGER);
      res.writeHead(413, { 'content-type': 'application/json' }).end('{"error":"payload_too_large"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

/**
 * Declares a 1 GiB body and writes as fast as the server takes it, reading nothing for the first
 * `deafMs` (a client, or a proxy, busy writing), then reads what arrived.
 */
function deafUpload(deafMs: number): Promise<{ answer: string; error: string | null; written: number; closedAfterMs: number }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    let error: string | null = null;
    let written = 0;
    let answeredAt = 0;
    socket.pause();
    socket.on('data', (d: Buffer) => {
      answer += d.toString();
      answeredAt ||= Date.now();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    socket.on('close', () => resolve({ answer: answer.split('\r\n')[0] ?? '', error, written, closedAfterMs: answeredAt ? Date.now() - answeredAt : -1 }));
    socket.write(`POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: ${1024 * MiB}\r\n\r\n`);
    const zeros = Buffer.alloc(256 * 1024);
    const pump = (): void => {
      while (written < 256 * MiB && !socket.destroyed) {
        written += zeros.length;
        if (!socket.write(zeros)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    pump();
    setTimeout(() => socket.resume(), deafMs);
  });
}

it('a client that reads nothing while it writes still reads the 413 afterwards', async () => {
  const res = await deafUpload(150);
  expect(res.answer).toBe('HTTP/1.1 413 Payload Too Large');
  // The server stopped reading at the limit: the client could write only what socket buffers hold.
  expect(res.written).toBeLessThan(64 * MiB);
  expect(serverRead).toBeLessThan(8 * MiB);
});

it('drops the connection after the linger, not before, while the client keeps writing', async () => {
  const res = await deafUpload(0);
  expect(res.answer).toBe('HTTP/1.1 413 Payload Too Large');
  // Half-closed for the linger (the client saw the answer and could not send more), then gone.
  expect(res.closedAfterMs).toBeGreaterThanOrEqual(LINGER - 50);
  expect(res.written).toBeLessThan(64 * MiB);
});
