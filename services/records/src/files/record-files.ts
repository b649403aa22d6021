/**
 * Which stored files a record holds, and which a write let go of (docs/files.md "Status": a
 * record delete deletes its files; an update that sets a file field without a file removes it).
 * Pure functions over a record's data and its collection's file fields.
 */
import { isFileMeta, type FileMeta } from './file-field';

/** The names of the file fields of a collection, from its field definitions. */
export function fileFieldNames(fields: { [name: string]: { type: string } }): string[] {
  return Object.entries(fields)
    .filter(([, f]) => f.type === 'file' || f.type === 'files')
    .map(([name]) => name);
}

/** Every file's metadata a record holds in its file fields. */
export function filesOf(fileFields: readonly string[], record: { [field: string]: unknown } | null): FileMeta[] {
  if (!record) return [];
  const out: FileMeta[] = [];
  for (const f of fileFields) {
    const v = record[f];
    for (const item of Array.isArray(v) ? v : [v]) if (isFileMeta(item)) out.push(item);
  }
  return out;
}

/** The stored names `before` held that `after` no longer holds: delete them once the write committed. */
export function releasedFiles(fileFields: readonly string[], before: { [field: string]: unknown } | null, after: { [field: string]: unknown } | null): string[] {
  const kept = new Set(filesOf(fileFields, after).map((m) => m.name));
  return filesOf(fileFields, before)
    .map((m) => m.name)
    .filter((n) => !kept.has(n));
}
