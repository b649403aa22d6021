/**
 * Removes stored files no record references (docs/files.md "Storage"): an upload is stored
 * before its record commits, so a crash (or a failed cleanup) between the two leaves a file
 * nobody can reach. Files younger than `graceMs` are left alone — their record may be about to
 * commit. A thumbnail (`thumbs_<name>/<spec>`) goes with its original; the parts of resumable
 * uploads (`_uploads/`) are left to their session's expiry (upload-sessions.ts). Partial writes are the
 * adapter's to sweep (`sweepPartial`), called here too.
 */
import type { FileKey, FileStorage } from './storage/file-storage';
import { isUploadKey } from './upload-sessions';

export const DEFAULT_ORPHAN_GRACE_MS = 60 * 60 * 1000;

export interface SweepOptions {
  graceMs?: number;
  now?: number;
}

/** The key of the original a key names: itself, or for a thumbnail the file it was made of. */
export function originalOf(key: FileKey): FileKey {
  const parts = key.split('/');
  const at = parts.findIndex((p) => p.startsWith('thumbs_'));
  if (at < 0) return key;
  return [...parts.slice(0, at), parts[at].slice('thumbs_'.length)].join('/') as FileKey;
}

/**
 * Sweeps everything under `prefix` (a project, or a project's collection). `isReferenced`
 * answers whether a record holds the original at this key.
 */
export async function sweepOrphans(
  storage: FileStorage,
  prefix: FileKey,
  isReferenced: (original: FileKey) => Promise<boolean>,
  opts: SweepOptions = {},
): Promise<{ removed: number; partial: number }> {
  const graceMs = opts.graceMs ?? DEFAULT_ORPHAN_GRACE_MS;
  const now = opts.now ?? Date.now();
  const answers = new Map<FileKey, boolean>();
  const doomed: FileKey[] = [];
  for await (const o of storage.list(prefix)) {
    // Parts of resumable uploads are no record's yet: their session's expiry removes them.
    if (now - o.modifiedAt < graceMs || isUploadKey(o.key)) continue;
    const original = originalOf(o.key);
    let referenced = answers.get(original);
    if (referenced === undefined) answers.set(original, (referenced = await isReferenced(original)));
    if (!referenced) doomed.push(o.key);
  }
  for (const k of doomed) await storage.delete(k);
  return { removed: doomed.length, partial: await storage.sweepPartial(graceMs) };
}
