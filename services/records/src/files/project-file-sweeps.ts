/**
 * Runs the orphan sweeper (orphan-sweeper.ts) over the projects this process stored files for
 * (docs/files.md "Storage"): an upload is stored before its record commits, so a crash between
 * the two — or a delete whose clean-up failed — leaves files no record holds. Every `intervalMs`
 * each such project's collections with file fields are read page by page for the names their
 * records hold, and what is stored under the collection, past the grace period and not held,
 * is deleted with its thumbnails; the adapter's partial writes go too.
 */
import type { Logger } from 'pino';
import type { Collection, ProjectId } from '@plinth/shared';
import type { RecordStore } from '../store/record-store';
import { DEFAULT_ORPHAN_GRACE_MS, sweepOrphans } from './orphan-sweeper';
import { fileFieldNames, filesOf } from './record-files';
import { fileKey, type FileKey, type FileStorage } from './storage/file-storage';

const PAGE = 500;

/** The stored names the records of `collection` hold. */
async function heldNames(store: RecordStore, project: ProjectId, collection: Collection): Promise<Set<string>> {
  const fields = fileFieldNames(collection.fields);
  const names = new Set<string>();
  let after: { value: string; id: string } | undefined;
  for (;;) {
    const page = await store.queryRecords(project, collection, { predicate: true, orderBy: 'id', direction: 'asc', limit: PAGE, ...(after ? { after } : {}) });
    for (const r of page) for (const m of filesOf(fields, r)) names.add(m.name);
    const last = page[page.length - 1];
    if (page.length < PAGE || !last) return names;
    after = { value: last.id, id: last.id };
  }
}

/** Sweeps one project's files now; returns how many objects were removed. */
export async function sweepProjectFiles(storage: FileStorage, store: RecordStore, project: ProjectId, graceMs = DEFAULT_ORPHAN_GRACE_MS): Promise<number> {
  let removed = 0;
  for (const collection of await store.listCollections(project)) {
    if (fileFieldNames(collection.fields).length === 0) continue;
    const held = await heldNames(store, project, collection);
    const prefix = fileKey(project, collection.name);
    const result = await sweepOrphans(storage, prefix, async (original: FileKey) => held.has(original.slice(prefix.length + 1)), { graceMs });
    removed += result.removed;
  }
  return removed;
}

export class ProjectFileSweeps {
  private readonly projects = new Set<ProjectId>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(
    private readonly storage: FileStorage,
    private readonly store: RecordStore,
    private readonly logger: Logger,
    private readonly opts: { intervalMs: number; graceMs?: number },
  ) {}

  /** A project this process stored a file for: swept from now on. */
  touched(project: ProjectId): void {
    this.projects.add(project);
    if (!this.timer && this.opts.intervalMs > 0) {
      this.timer = setInterval(() => void this.sweep(), this.opts.intervalMs);
      this.timer.unref();
    }
  }

  async sweep(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (const project of [...this.projects]) {
        try {
          await sweepProjectFiles(this.storage, this.store, project, this.opts.graceMs);
        } catch (err) {
          this.logger.warn({ err, project }, 'file sweep failed; retried at the next one');
        }
      }
    } finally {
      this.running = false;
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
