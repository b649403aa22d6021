/**
 * A stored file's bytes to and from a deployment as streams, for the files section of a project
 * archive (file-section.ts): a download read chunk by chunk (the next chunk is asked for only
 * once the last one is written), and an upload (`PUT`, with the Content-Length the gateway asks
 * for) written chunk by chunk with backpressure. Memory holds a chunk, never a file.
 */
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import { CliError } from '../client';

/** The response of a download: its status, and its body as chunks when 200. */
export async function download(url: string, key: string): Promise<{ status: number; body: AsyncIterable<Uint8Array>; text: () => Promise<string> }> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new CliError(`cannot reach ${new URL(url).origin}: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
  }
  const body = (res.body ?? (async function* () {})()) as AsyncIterable<Uint8Array>;
  return { status: res.status, body, text: () => res.text() };
}

export interface Upload {
  /** Sends a chunk; waits while the connection is behind. Ignored once the server has answered (a refusal). */
  write(chunk: Buffer): Promise<void>;
  /** Ends the body; the server's answer. */
  end(): Promise<{ status: number; text: string }>;
}

/** Starts `PUT url` with a body of exactly `size` bytes. */
export function upload(url: string, key: string, size: number): Upload {
  const target = new URL(url);
  const req = (target.protocol === 'https:' ? https : http).request(target, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/octet-stream', 'Content-Length': String(size) },
  });
  let answered = false;
  const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req.on('error', (e: NodeJS.ErrnoException) => reject(new CliError(`PUT ${target.pathname} failed: ${e.code ?? e.message}`)));
    req.on('response', (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (s: string) => {
        if (text.length < 4096) text += s;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
  });
  // Looked at in `end` (or `write`): a refusal before the last byte is not an unhandled rejection.
  response.catch(() => undefined);
  return {
    async write(chunk) {
      if (answered) return;
      if (!req.write(chunk)) await Promise.race([once(req, 'drain'), response]);
    },
    async end() {
      if (!answered) req.end();
      return response;
    },
  };
}
