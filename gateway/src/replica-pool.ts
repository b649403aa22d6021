import type { Logger } from 'pino';

/** Errors that mean "this replica cannot be reached" (as opposed to a slow or failing request). */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ECONNABORTED',
  'ETIMEDOUT',
]);

export function isUnreachableError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNREACHABLE_CODES.has(code);
}

export interface ReplicaPoolOptions {
  service: string;
  logger: Logger;
  /** How often each replica's `/readyz` is asked (active health). Default 2000 ms; 0 = never. */
  checkIntervalMs?: number;
  /** Longest wait for a `/readyz` answer. Default 1000 ms. */
  checkTimeoutMs?: number;
  /** First ejection after a connection failure; doubles on each further failure. Default 1000 ms. */
  ejectMs?: number;
  /** Longest ejection. Default 30 s. */
  maxEjectMs?: number;
}

/**
 * The replicas of one service as the gateway sees them. A replica is used when its last
 * `/readyz` answered 200 (active health: a replica shutting down or whose Redis or disk failed
 * drops out within one check interval) and it is not ejected (passive health: a refused or reset
 * connection takes it out for a back-off that doubles per consecutive failure, up to
 * `maxEjectMs`). When no replica is usable, all are tried in turn rather than none.
 */
export class ReplicaPool {
  private readonly state: Array<{ url: string; ready: boolean; ejectedUntil: number; failures: number }>;
  private next = 0;
  private readonly timer: NodeJS.Timeout | null;

  constructor(
    targets: string[],
    private readonly opts: ReplicaPoolOptions,
  ) {
    if (targets.length === 0) throw new Error(`no upstream URL for ${opts.service}`);
    this.state = targets.map((url) => ({ url, ready: true, ejectedUntil: 0, failures: 0 }));
    const every = opts.checkIntervalMs ?? 2000;
    this.timer = targets.length > 1 && every > 0 ? setInterval(() => void this.checkAll(), every) : null;
    this.timer?.unref();
  }

  get targets(): string[] {
    return this.state.map((s) => s.url);
  }

  /** The next usable replica, round-robin, other than `exclude` when another is usable. */
  pick(exclude?: string): string {
    const now = Date.now();
    const n = this.state.length;
    for (const usable of [(s: (typeof this.state)[number]) => s.ready && s.ejectedUntil <= now, () => true]) {
      for (let i = 0; i < n; i++) {
        const s = this.state[(this.next + i) % n]!;
        if (s.url === exclude && n > 1) continue;
        if (!usable(s)) continue;
        this.next = (this.next + i + 1) % n;
        return s.url;
      }
    }
    return this.state[0]!.url;
  }

  /** Passive health: `url` refused or reset a connection. */
  eject(url: string, err: unknown): void {
    const s = this.state.find((x) => x.url === url);
    if (!s) return;
    s.failures += 1;
    const ms = Math.min(this.opts.maxEjectMs ?? 30_000, (this.opts.ejectMs ?? 1000) * 2 ** (s.failures - 1));
    s.ejectedUntil = Date.now() + ms;
    this.opts.logger.warn(
      { service: this.opts.service, replica: url, eject_ms: ms, err: (err as Error)?.message },
      'upstream replica unreachable; ejected',
    );
  }

  /** A response came back from `url`: its failure streak ends. */
  succeeded(url: string): void {
    const s = this.state.find((x) => x.url === url);
    if (s && s.failures > 0) {
      s.failures = 0;
      s.ejectedUntil = 0;
    }
  }

  /** Active health: asks every replica's `/readyz` once. */
  async checkAll(): Promise<void> {
    await Promise.all(
      this.state.map(async (s) => {
        let ready = false;
        try {
          const res = await fetch(`${s.url}/readyz`, { signal: AbortSignal.timeout(this.opts.checkTimeoutMs ?? 1000) });
          ready = res.status === 200;
          await res.body?.cancel();
        } catch {
          ready = false;
        }
        if (ready !== s.ready) {
          this.opts.logger.warn({ service: this.opts.service, replica: s.url, ready }, 'upstream replica readiness changed');
        }
        s.ready = ready;
        if (ready && s.ejectedUntil > Date.now()) {
          s.ejectedUntil = 0;
          s.failures = 0;
        }
      }),
    );
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
