/**
 * A project archive on disk: gzip'd JSON lines, written and read as streams so that a project
 * of any size passes through a bounded amount of memory (one line, one request's batch). The
 * writer writes to `<file>.partial` and renames it into place at the end: a file with the
 * archive's name is a finished one (its last line is `end`, with the counts).
 */
import fs from 'node:fs';
import { once } from 'node:events';
import { StringDecoder } from 'node:string_decoder';
import { finished } from 'node:stream/promises';
import { createGunzip, createGzip, type Gzip } from 'node:zlib';
import { CliError } from '../client';

/** The longest line a reader accepts (a record is at most a few MiB of JSON). */
const MAX_LINE_BYTES = 32 * 1024 * 1024;

export class ArchiveWriter {
  private constructor(
    private readonly gzip: Gzip,
    private readonly file: fs.WriteStream,
    private readonly target: string,
  ) {}

  static open(target: string): ArchiveWriter {
    const file = fs.createWriteStream(`${target}.partial`, { mode: 0o600 });
    const gzip = createGzip();
    gzip.pipe(file);
    return new ArchiveWriter(gzip, file, target);
  }

  /** Writes one line; waits while the file is behind (backpressure). */
  async line(value: object): Promise<void> {
    if (!this.gzip.write(`${JSON.stringify(value)}\n`)) await once(this.gzip, 'drain');
  }

  async finish(): Promise<void> {
    this.gzip.end();
    await finished(this.file);
    fs.renameSync(`${this.target}.partial`, this.target);
  }

  /** Stops and removes the unfinished file. */
  async abort(): Promise<void> {
    this.gzip.destroy();
    this.file.destroy();
    fs.rmSync(`${this.target}.partial`, { force: true });
  }
}

/** The archive's lines, parsed, in order; a CliError naming the line when one is not a JSON object. */
export async function* readArchive(file: string): AsyncGenerator<{ [k: string]: unknown }> {
  let input: fs.ReadStream;
  try {
    fs.accessSync(file, fs.constants.R_OK);
    input = fs.createReadStream(file);
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const gunzip = input.pipe(createGunzip());
  input.on('error', (e) => gunzip.destroy(e));
  // A decoder, so a character split between two chunks is read whole.
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let n = 0;
  const parse = (text: string): { [k: string]: unknown } => {
    n++;
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      throw new CliError(`${file}: line ${n} is not JSON: the archive is damaged`);
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new CliError(`${file}: line ${n} is not a JSON object: the archive is damaged`);
    return v as { [k: string]: unknown };
  };
  try {
    for await (const chunk of gunzip) {
      const lines = (rest + decoder.write(chunk as Buffer)).split('\n');
      rest = lines.pop() as string;
      for (const text of lines) if (text) yield parse(text);
      if (rest.length > MAX_LINE_BYTES) throw new CliError(`${file}: line ${n + 1} is longer than ${MAX_LINE_BYTES} bytes: not a Plinth project archive`);
    }
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`${file} is not a gzip'd Plinth project archive, or it is damaged (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  rest += decoder.end();
  if (rest) yield parse(rest);
}
