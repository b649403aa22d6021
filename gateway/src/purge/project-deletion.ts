import type { Logger } from 'pino';
import type { ProjectId } from '@plinth/shared';
import type { ProjectStore } from '../store/project-store';
import type { ServicePurge } from './service-purges';

export interface ProjectDeletionOptions {
  store: ProjectStore;
  /** Every service holding project data, purged in this order. The array may grow after start. */
  purges: ServicePurge[];
  logger: Logger;
  /** First delay between background retries of an unfinished purge; doubles up to a minute. */
  retryMs: number;
  /** Runs as soon as the project and its keys are deleted, before the purge (drop key caches). */
  onDeleted?: (id: ProjectId) => void;
}

/** What DELETE /v1/admin/projects/{p} reports about the purge. */
export type PurgeState = 'done' | 'pending';

const IMMEDIATE_ATTEMPTS = 3;
const MAX_RETRY_MS = 60_000;

/**
 * Deleting a project: the project and its keys go at once (its keys stop working), a purge
 * tombstone keeps the id from being reused, every service purges the project's data, and only
 * then is the tombstone removed. A purge that cannot finish (a service unreachable) is retried
 * in the background, also after a restart of the gateway (`resume`).
 */
export class ProjectDeletion {
  private readonly timers = new Map<ProjectId, NodeJS.Timeout>();
  private readonly running = new Set<ProjectId>();
  private closed = false;

  constructor(private readonly opts: ProjectDeletionOptions) {}

  /** Deletes the project and purges it; null when there is no such project. */
  async delete(id: ProjectId): Promise<PurgeState | null> {
    if (!(await this.opts.store.deleteProject(id))) return null;
    this.opts.onDeleted?.(id);
    for (let attempt = 1; attempt <= IMMEDIATE_ATTEMPTS; attempt++) {
      if (await this.purge(id)) return 'done';
      if (attempt < IMMEDIATE_ATTEMPTS) await new Promise((r) => setTimeout(r, 100 * 4 ** (attempt - 1)));
    }
    this.schedule(id, 1);
    return 'pending';
  }

  /** Restarts the purges a previous run left unfinished. */
  async resume(): Promise<void> {
    for (const id of await this.opts.store.listPurges()) this.schedule(id, 0);
  }

  /** Stops background retries (they resume on the next start). */
  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  /** One pass over every service; true when all purged and the tombstone is gone. */
  private async purge(id: ProjectId): Promise<boolean> {
    if (this.running.has(id)) return false;
    this.running.add(id);
    try {
      for (const p of [...this.opts.purges]) {
        try {
          await p.purge(id);
        } catch (err) {
          this.opts.logger.warn({ err, project: id, service: p.name }, 'project purge: a service did not finish; will retry');
          return false;
        }
      }
      try {
        await this.opts.store.finishPurge(id);
      } catch (err) {
        this.opts.logger.warn({ err, project: id }, 'project purge: the tombstone could not be removed; will retry');
        return false;
      }
      this.opts.logger.info({ project: id }, 'project purged');
      return true;
    } finally {
      this.running.delete(id);
    }
  }

  private schedule(id: ProjectId, failures: number): void {
    if (this.closed || this.timers.has(id)) return;
    const delay = failures === 0 ? 0 : Math.min(this.opts.retryMs * 2 ** (failures - 1), MAX_RETRY_MS);
    const timer = setTimeout(() => {
      this.timers.delete(id);
      void this.purge(id).then(
        (done) => {
          if (!done) this.schedule(id, failures + 1);
        },
        (err: unknown) => {
          this.opts.logger.warn({ err, project: id }, 'project purge failed; will retry');
          this.schedule(id, failures + 1);
        },
      );
    }, delay);
    timer.unref();
    this.timers.set(id, timer);
  }
}
