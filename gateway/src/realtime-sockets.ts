import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { UnauthorizedError, type ProjectId } from '@plinth/shared';
import type { KeyAuthenticator } from './key-authenticator';

/** How often the keys of open realtime sockets are checked again (ms): a revoked key's sockets end within this plus a lookup. */
export const REALTIME_KEY_CHECK_MS = 250;

/**
 * A deleted project's sockets are closed by the realtime service itself, with 4004 "project
 * deleted" (its purge comes after the project and its keys are gone): they are cut here only if
 * still open this long after their key stopped authenticating.
 */
const PROJECT_DELETION_GRACE_MS = 5000;

interface Opened {
  project: ProjectId;
  sockets: Set<Duplex>;
  /** When the key was first found gone with its project (null while it authenticates). */
  projectGoneAt: number | null;
}

/**
 * The realtime sockets this gateway process holds (in-process in standalone, proxied in the
 * cluster), grouped by the project key that opened them. While any is open, each distinct key is
 * looked up again every REALTIME_KEY_CHECK_MS — through the key cache, which a revocation clears
 * at once on this process, across standalone workers (the store's change counter) and across
 * gateway replicas (KeyCacheBus) — and the sockets of a key that no longer authenticates while
 * its project exists are cut: a revoked or rotated-out key stops receiving within a second.
 * (When the project itself was deleted, the realtime service closes its sockets with 4004,
 * which says more than a cut connection; see PROJECT_DELETION_GRACE_MS.) One cached lookup per
 * key in use, not per socket; a project lookup only for a key that failed.
 */
export class RealtimeSockets {
  private readonly byKey = new Map<string, Opened>();
  private timer: NodeJS.Timeout | null = null;
  private checking = false;

  constructor(
    private readonly keys: KeyAuthenticator,
    private readonly projectExists: (project: ProjectId) => Promise<boolean>,
    private readonly logger: Logger,
  ) {}

  /** Tracks a socket handed to realtime after `credential` was accepted for `project`. */
  add(credential: string, project: ProjectId, socket: Duplex): void {
    let opened = this.byKey.get(credential);
    if (!opened) this.byKey.set(credential, (opened = { project, sockets: new Set(), projectGoneAt: null }));
    opened.sockets.add(socket);
    socket.once('close', () => {
      opened.sockets.delete(socket);
      if (opened.sockets.size === 0 && this.byKey.get(credential) === opened) this.byKey.delete(credential);
      if (this.byKey.size === 0) this.stop();
    });
    if (!this.timer) {
      this.timer = setInterval(() => void this.check(), REALTIME_KEY_CHECK_MS);
      this.timer.unref?.();
    }
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      for (const [credential, opened] of [...this.byKey]) {
        try {
          await this.keys.authenticate(opened.project, credential);
          continue;
        } catch (err) {
          if (!(err instanceof UnauthorizedError)) throw err;
        }
        if (!(await this.projectExists(opened.project))) {
          opened.projectGoneAt ??= Date.now();
          if (Date.now() - opened.projectGoneAt < PROJECT_DELETION_GRACE_MS) continue;
        }
        this.byKey.delete(credential);
        for (const socket of opened.sockets) socket.destroy();
      }
    } catch (err) {
      // The project store cannot be read now: keep the sockets, check again next time.
      this.logger.warn({ err }, 'realtime key check failed');
    } finally {
      this.checking = false;
    }
  }
}
