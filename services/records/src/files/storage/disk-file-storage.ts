/**
 * FileStorage on the local disk (standalone default): `<root>/<key>`, written to
 * `<root>/.partial/<random>` first, fsync'd, renamed into place and the directory fsync'd — so
 * a completed put survives a power cut and a crash mid-write leaves only a `.partial` file,
 * which `sweepPartial` removes.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ByteRange, FileKey, FileStorage, ObjectInfo, PutOptions, StoredObject } from './file-storage';
import { MeteredBody } from './metered-body';

const PARTIAL = '.partial';

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

async function fsyncPath(p: string): Promise<void> {
  const handle = await fs.open(p, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export class DiskFileStorage implements FileStorage {
  constructor(private readonly root: string) {}

  async init(): Promise<this> {
    // Only Plinth's user reads stored files, as every other file of the data directory.
    await fs.mkdir(path.join(this.root, PARTIAL), { recursive: true, mode: 0o700 });
    return this;
  }

  private pathOf(key: FileKey): string {
    return path.join(this.root, ...key.split('/'));
  }

  async put(key: FileKey, body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, opts: PutOptions): Promise<StoredObject> {
    const metered = new MeteredBody(body, opts.maxBytes);
    const partial = path.join(this.root, PARTIAL, randomUUID());
    try {
      const out = createWriteStream(partial, { flags: 'wx', mode: 0o600 });
      await pipeline(Readable.from(metered), out);
      await fsyncPath(partial);
      const target = this.pathOf(key);
      await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
      await fs.rename(partial, target);
      await fsyncPath(path.dirname(target));
      return metered.result();
    } catch (err) {
      await fs.rm(partial, { force: true });
      throw err;
    }
  }

  async stat(key: FileKey): Promise<ObjectInfo | null> {
    try {
      const s = await fs.stat(this.pathOf(key));
      return s.isFile() ? { key, size: s.size, modifiedAt: s.mtimeMs } : null;
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async get(key: FileKey, range?: ByteRange): Promise<Readable | null> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.pathOf(key), 'r');
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
    // The open handle keeps the bytes readable even if the object is replaced meanwhile.
    return handle.createReadStream({ start: range?.start, end: range?.end, autoClose: true, highWaterMark: 64 * 1024 });
  }

  async delete(key: FileKey): Promise<boolean> {
    try {
      await fs.unlink(this.pathOf(key));
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }

  async deletePrefix(prefix: FileKey): Promise<number> {
    let n = 0;
    for await (const _ of this.list(prefix)) n++;
    await fs.rm(this.pathOf(prefix), { recursive: true, force: true });
    return n;
  }

  async *list(prefix: FileKey): AsyncGenerator<ObjectInfo> {
    const base = this.pathOf(prefix);
    let entries: string[];
    try {
      entries = await fs.readdir(base, { recursive: true });
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    for (const rel of entries) {
      const info = await this.stat(`${prefix}/${rel.split(path.sep).join('/')}` as FileKey);
      if (info) yield info;
    }
  }

  async sweepPartial(olderThanMs: number): Promise<number> {
    const dir = path.join(this.root, PARTIAL);
    let n = 0;
    for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
      const p = path.join(dir, name);
      const s = await fs.stat(p).catch(() => null);
      if (s && Date.now() - s.mtimeMs >= olderThanMs) {
        await fs.rm(p, { force: true });
        n++;
      }
    }
    return n;
  }

  async close(): Promise<void> {}
}
