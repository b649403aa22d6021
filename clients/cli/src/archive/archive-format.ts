/**
 * The project archive (docs/operators.md "Moving a project"): gzip'd JSON lines, in this order —
 *
 *   {"type":"header", "format":"plinth-project/1", "project":"<id>", "exported_at", "encryption":{kdf…, "check"}}
 *   {"type":"project", "project":{id,name,created_at}, "keys":[{id,kind,hash,prefix,created_at}]}   keys hashed
 *   {"type":"collection", "collection":{name,fields,rules}}          relation targets first
 *   {"type":"auth_settings", "sealed":"…"}                             the settings with provider secrets, encrypted
 *   {"type":"record", "collection":"<name>", "record":{id,version,created_at,updated_at,…}}   per collection, by id
 *   {"type":"user", "user":{…, password_hash, identities, mfa:{…, secret_sealed}|null}}       TOTP secret encrypted
 *   {"type":"file", "collection", "record", "field", "name", "size", "sha256"}   per stored file a record names,
 *   {"type":"file_chunk", "data":"<base64>"}                           followed by its bytes (file-section.ts)
 *   {"type":"webhook", "webhook":{…, secret_sealed}}                   signing secret encrypted (webhook-section.ts)
 *   {"type":"end", "counts":{…}}                                       an archive without it is truncated
 *
 * Sections are pluggable: each is a `Section` with what it writes on export and the line types it
 * reads on import (sections.ts lists them in archive order); a new one adds its lines and its
 * count without changing the others.
 */
import type { CliIo, Connection } from '../client';
import type { ArchiveKey } from './archive-crypto';

export const ARCHIVE_FORMAT = 'plinth-project/1';

export type ArchiveLine = { type: string; [k: string]: unknown };

/** What every section of an export or import works with. */
export interface ArchiveContext {
  conn: Connection;
  io: CliIo;
  key: ArchiveKey;
  /** The project's id (the same on both sides). */
  project: string;
  /** A secret key of the project, made for this run and revoked at its end. */
  secretKey: string;
  /** `/v1/projects/{project}` + rest. */
  path(rest: string): string;
}

export interface Section {
  /** Its name in the counts of the `end` line. */
  name: string;
  /** Writes its lines; resolves to how many items it wrote. */
  export(ctx: ArchiveContext, write: (line: ArchiveLine) => Promise<void>): Promise<number>;
  /** The line types it reads. */
  reads: readonly string[];
  /** Makes an importer for one run: `line` for each of its lines in archive order, `flush` after the last. */
  importer(ctx: ArchiveContext): { line(line: ArchiveLine): Promise<void>; flush(): Promise<void>; count(): number };
}
