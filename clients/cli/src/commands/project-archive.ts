/**
 * `plinth projects export <id>` and `plinth projects import <archive>` (operator key): a whole
 * project — its keys (hashed), collections, records, Auth settings with their secrets, users with
 * their password hashes, identities and second factors, stored files, webhooks with their signing
 * secrets — in one gzip'd JSON-lines archive
 * (archive/archive-format.ts), moved from one deployment to another (standalone → cluster).
 * Both sides go through the deployments' APIs: the operator API for the project and its keys,
 * and the project's API with a secret key made for the run and revoked at its end (that key is
 * not exported), and operator-only endpoints with the operator key for file bytes and webhook
 * secrets. Secrets are encrypted under a passphrase (--passphrase or PLINTH_ARCHIVE_PASSPHRASE).
 */
import path from 'node:path';
import { CliError, UsageError, printJson, type CliIo, type Connection } from '../client';
import type { Flags } from '../flags';
import { ArchiveKey } from '../archive/archive-crypto';
import { ARCHIVE_FORMAT, type ArchiveContext, type ArchiveLine } from '../archive/archive-format';
import { ArchiveWriter, readArchive } from '../archive/archive-io';
import { SECTIONS } from '../archive/sections';

type Json = { [k: string]: unknown };

function passphrase(flags: Flags, io: CliIo): string {
  const p = flags.passphrase ?? io.env.PLINTH_ARCHIVE_PASSPHRASE;
  if (!p) throw new UsageError('a project archive holds secrets: give a passphrase with --passphrase or PLINTH_ARCHIVE_PASSPHRASE');
  return p;
}

const admin = (id: string) => `/v1/admin/projects/${encodeURIComponent(id)}`;

/** Runs `fn` with a secret key of the project made for it, revoked afterwards whatever happens. */
async function withRunKey<T>(conn: Connection, id: string, fn: (secretKey: string, keyId: string) => Promise<T>): Promise<T> {
  const made = await conn.ok<{ key: { id: string; value: string } }>('POST', `${admin(id)}/keys`, { key: conn.requireAdminKey(), body: { kind: 'secret' } });
  try {
    return await fn(made.key.value, made.key.id);
  } finally {
    await conn.call('DELETE', `${admin(id)}/keys/${encodeURIComponent(made.key.id)}`, { key: conn.requireAdminKey() }).catch(() => undefined);
  }
}

function context(conn: Connection, io: CliIo, key: ArchiveKey, project: string, secretKey: string): ArchiveContext {
  return { conn, io, key, project, secretKey, path: (rest) => `/v1/projects/${encodeURIComponent(project)}${rest}` };
}

export async function exportProject(id: string, flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const adminKey = conn.requireAdminKey();
  const out = path.resolve(flags.out ?? `${id}.plinth.jsonl.gz`);
  const key = await ArchiveKey.create(passphrase(flags, io));
  const { project, keys } = await conn.ok<{ project: Json; keys: Json[] }>('GET', `${admin(id)}/export`, { key: adminKey });
  const writer = ArchiveWriter.open(out);
  try {
    const counts = await withRunKey(conn, id, async (secretKey, runKeyId) => {
      const ctx = context(conn, io, key, id, secretKey);
      await writer.line({ type: 'header', format: ARCHIVE_FORMAT, project: id, exported_at: new Date().toISOString(), encryption: { ...key.params, check: key.check() } });
      const kept = keys.filter((k) => k.id !== runKeyId);
      await writer.line({ type: 'project', project, keys: kept });
      const c: Json = { keys: kept.length };
      for (const section of SECTIONS) c[section.name] = await section.export(ctx, (line) => writer.line(line));
      await writer.line({ type: 'end', counts: c });
      return c;
    });
    await writer.finish();
    printJson(io, { archive: out, project: id, counts });
    return 0;
  } catch (e) {
    await writer.abort();
    throw e;
  }
}

export async function importProject(file: string, flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const adminKey = conn.requireAdminKey();
  const phrase = passphrase(flags, io);
  const lines = readArchive(file);
  const next = async (): Promise<ArchiveLine | null> => {
    const r = await lines.next();
    return r.done ? null : (r.value as ArchiveLine);
  };
  const header = await next();
  if (header?.type !== 'header' || header.format !== ARCHIVE_FORMAT) throw new CliError(`${file} is not a Plinth project archive (${ARCHIVE_FORMAT})`);
  const encryption = (header.encryption ?? {}) as Json;
  const key = await ArchiveKey.open(phrase, encryption, encryption.check);
  const projectLine = await next();
  if (projectLine?.type !== 'project') throw new CliError(`${file}: the project line is missing: the archive is damaged`);
  const id = String((projectLine.project as Json | undefined)?.id);
  await conn.ok('POST', '/v1/admin/projects/import', { key: adminKey, body: { project: projectLine.project, keys: projectLine.keys } });

  const counts = await withRunKey(conn, id, async (secretKey) => {
    const ctx = context(conn, io, key, id, secretKey);
    const importers = SECTIONS.map((s) => ({ section: s, run: s.importer(ctx) }));
    const byType = new Map(importers.flatMap((i) => i.section.reads.map((t) => [t, i] as const)));
    let active: (typeof importers)[number] | null = null;
    for (let line = await next(); line; line = await next()) {
      if (line.type === 'end') {
        await active?.run.flush();
        const c: Json = { keys: (projectLine.keys as unknown[]).length };
        for (const i of importers) c[i.section.name] = i.run.count();
        const expected = (line.counts ?? {}) as Json;
        for (const [name, n] of Object.entries(c)) {
          if (expected[name] !== undefined && expected[name] !== n) throw new CliError(`${file}: ${String(expected[name])} ${name} exported but ${String(n)} imported`);
        }
        return c;
      }
      const handler = byType.get(line.type);
      if (!handler) throw new CliError(`${file}: a "${line.type}" line, which this Plinth does not know (an archive of a newer release?)`);
      if (active && active !== handler) await active.run.flush();
      active = handler;
      await handler.run.line(line);
    }
    throw new CliError(`${file} ends before its "end" line: the archive is truncated (what was read is imported; delete project ${id} and import a whole archive)`);
  });
  printJson(io, { imported: path.resolve(file), project: id, counts });
  return 0;
}
