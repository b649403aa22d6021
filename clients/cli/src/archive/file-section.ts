/**
 * The files section of a project archive: the bytes of every stored file a record's `file` or
 * `files` field names. Per file, a `file` line — its collection, record, field, stored name, size
 * and SHA-256 — then its bytes as `file_chunk` lines of base64 (FILE_CHUNK bytes each):
 *
 *   {"type":"file", "collection":"docs", "record":"rec_…", "field":"attachment", "name":"report_k3v9x2m4pq.pdf", "size":5242880, "sha256":"…"}
 *   {"type":"file_chunk", "data":"JVBERi0xLjcK…"}
 *
 * Export reads each file through the ordinary download (the run's secret key) and checks its
 * size and hash against the record; import streams the chunks into
 * `PUT …/files/{collection}/{record}/{name}` (operators only), which stores the bytes in the
 * target's file storage only when they match the record the records section already imported.
 * Thumbnails are not carried: the target makes them again at the first download asking for one.
 */
import { createHash } from 'node:crypto';
import { CliError } from '../client';
import type { ArchiveContext, ArchiveLine, Section } from './archive-format';
import { download, upload, type Upload } from './file-transfer';

type Json = { [k: string]: unknown };

/** Bytes per `file_chunk` line (≈ 700 KB of base64). */
const FILE_CHUNK = 512 * 1024;
const RECORD_PAGE = 1000;

interface FileRef {
  collection: string;
  record: string;
  field: string;
  name: string;
  size: number;
  sha256: string;
}

const isMeta = (v: unknown): v is { name: string; size: number; sha256: string } =>
  typeof v === 'object' && v !== null && typeof (v as Json).name === 'string' && typeof (v as Json).size === 'number' && typeof (v as Json).sha256 === 'string';

const fileUrl = (ctx: ArchiveContext, f: Pick<FileRef, 'collection' | 'record' | 'name'>) =>
  ctx.conn.url + ctx.path(`/files/${encodeURIComponent(f.collection)}/${encodeURIComponent(f.record)}/${encodeURIComponent(f.name)}`);

/** Every file the records of the project's collections name, page by page. */
async function* filesOfProject(ctx: ArchiveContext): AsyncGenerator<FileRef> {
  const { collections } = await ctx.conn.ok<{ collections: Json[] }>('GET', ctx.path('/collections'), { key: ctx.secretKey });
  for (const c of collections) {
    const collection = String(c.name);
    const fields = Object.entries((c.fields ?? {}) as { [name: string]: { type?: string } })
      .filter(([, f]) => f.type === 'file' || f.type === 'files')
      .map(([name]) => name);
    if (fields.length === 0) continue;
    const base = ctx.path(`/collections/${encodeURIComponent(collection)}/records`);
    let cursor: string | null = null;
    do {
      const q = new URLSearchParams({ orderBy: 'id', limit: String(RECORD_PAGE), ...(cursor ? { cursor } : {}) });
      const page: { records: Json[]; cursor: string | null } = await ctx.conn.ok('GET', `${base}?${q}`, { key: ctx.secretKey });
      for (const r of page.records) {
        for (const field of fields) {
          const v = r[field];
          for (const m of Array.isArray(v) ? v : [v]) if (isMeta(m)) yield { collection, record: String(r.id), field, name: m.name, size: m.size, sha256: m.sha256 };
        }
      }
      cursor = page.cursor;
    } while (cursor);
  }
}

async function exportFile(ctx: ArchiveContext, f: FileRef, write: (line: ArchiveLine) => Promise<void>): Promise<boolean> {
  const res = await download(fileUrl(ctx, f), ctx.secretKey);
  if (res.status === 404) {
    // The record names a file its deployment no longer has: the record moves, the bytes cannot.
    ctx.io.err.write(`plinth: warning: ${f.collection}/${f.record}: file ${f.name} is not stored on the source; its record moves without it\n`);
    return false;
  }
  if (res.status !== 200) throw new CliError(`GET ${new URL(fileUrl(ctx, f)).pathname} → ${res.status} ${(await res.text()).slice(0, 300)}`);
  await write({ type: 'file', ...f });
  const hash = createHash('sha256');
  let size = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const emit = async (bytes: Buffer) => write({ type: 'file_chunk', data: bytes.toString('base64') });
  for await (const chunk of res.body) {
    const b = Buffer.from(chunk);
    hash.update(b);
    size += b.length;
    pending.push(b);
    pendingBytes += b.length;
    while (pendingBytes >= FILE_CHUNK) {
      const all = Buffer.concat(pending);
      await emit(all.subarray(0, FILE_CHUNK));
      pending = [all.subarray(FILE_CHUNK)];
      pendingBytes = all.length - FILE_CHUNK;
    }
  }
  if (pendingBytes > 0) await emit(Buffer.concat(pending));
  if (size !== f.size || hash.digest('hex') !== f.sha256) {
    throw new CliError(`${f.collection}/${f.record}: the stored bytes of ${f.name} do not match its record (size or SHA-256): the source's file storage is damaged`);
  }
  return true;
}

export const files: Section = {
  name: 'files',
  reads: ['file', 'file_chunk'],
  async export(ctx, write) {
    let n = 0;
    for await (const f of filesOfProject(ctx)) if (await exportFile(ctx, f, write)) n++;
    return n;
  },
  importer(ctx) {
    let n = 0;
    let current: { ref: FileRef; put: Upload; received: number } | null = null;
    const finish = async () => {
      if (!current) return;
      const { ref, put, received } = current;
      current = null;
      if (received !== ref.size) throw new CliError(`file ${ref.name} of ${ref.collection}/${ref.record}: ${received} of its ${ref.size} bytes in the archive: the archive is damaged`);
      const r = await put.end();
      if (r.status !== 201) {
        let why = r.text.slice(0, 300);
        try {
          const b = JSON.parse(r.text) as { error?: string; message?: string };
          if (b.message) why = `${b.error}: ${b.message}`;
        } catch {
          // not JSON: the text
        }
        throw new CliError(`PUT ${new URL(fileUrl(ctx, ref)).pathname} → ${r.status} ${why}`);
      }
      n++;
    };
    return {
      async line(line) {
        if (line.type === 'file') {
          await finish();
          const ref = line as unknown as FileRef;
          if (![ref.collection, ref.record, ref.name].every((s) => typeof s === 'string') || !Number.isSafeInteger(ref.size) || ref.size < 0) {
            throw new CliError('a file line without its collection, record, name and size: the archive is damaged');
          }
          current = { ref, put: upload(fileUrl(ctx, ref), ctx.conn.requireAdminKey(), ref.size), received: 0 };
          return;
        }
        if (!current) throw new CliError('file bytes without their file line: the archive is damaged');
        const bytes = Buffer.from(String(line.data), 'base64');
        current.received += bytes.length;
        if (current.received > current.ref.size) throw new CliError(`file ${current.ref.name}: more bytes in the archive than its ${current.ref.size}: the archive is damaged`);
        await current.put.write(bytes);
      },
      flush: finish,
      count: () => n,
    };
  },
};
