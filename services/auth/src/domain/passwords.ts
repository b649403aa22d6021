import bcrypt from 'bcrypt';
import { AdmissionQueue, type AdmissionTicket } from '@plinth/shared';
import { MAX_PASSWORD_BYTES } from './validation';

/** Bounds of the hashing pool (docs/auth.md "Under overload"). */
export interface HashingLimits {
  /** Hashes running at once: the libuv threads bcrypt runs on. */
  concurrency: number;
  /** Hashes waiting at once; one project may hold three quarters of them. */
  maxQueued: number;
  /** Longest wait for a hashing thread; a hash predicted to wait over half of it is refused at once. */
  maxWaitMs: number;
}

/** Whose hash this is: the unit of fair share (project, then caller), and its client's signal. */
export type HashTicket = AdmissionTicket;

/**
 * bcrypt with a configured cost, admitted to libuv's thread pool through a bounded, fair queue:
 * at most `concurrency` hashes run at once; the others wait their project's and caller's turn,
 * at most `maxWaitMs`; one that cannot start in time is refused at once with 503 `overloaded`
 * and Retry-After, and one whose client went away while it waited never runs. Without it,
 * every hash asked for went to libuv's unbounded queue, and a spike kept the pool hashing for
 * clients that had given up long before.
 *
 * `verify` against a null hash (unknown e-mail, password-less user) still spends one comparison
 * on a dummy hash of the same cost, admitted the same way, so timing does not tell which
 * e-mails exist.
 */
export class PasswordHasher {
  private readonly dummy: string;
  private readonly pool: AdmissionQueue;

  constructor(
    private readonly cost: number,
    limits: HashingLimits,
  ) {
    this.dummy = bcrypt.hashSync('plinth-dummy-password-never-matches', cost);
    this.pool = new AdmissionQueue({
      name: 'password hashing',
      concurrency: limits.concurrency,
      maxQueued: limits.maxQueued,
      maxQueuedPerProject: Math.max(1, Math.floor((limits.maxQueued * 3) / 4)),
      maxWaitMs: limits.maxWaitMs,
      // Predicted waits are refused at half the deadline: the deadline then seldom has to refuse
      // (late) what the prediction let in when hashes slow down under load.
      maxPredictedWaitMs: limits.maxWaitMs / 2,
    });
  }

  hash(password: string, who: HashTicket): Promise<string> {
    return this.pool.run(who, () => bcrypt.hash(password, this.cost));
  }

  /**
   * True when `password` matches `hash`. A password over 72 bytes never matches (bcrypt would
   * compare only its first 72 bytes); it still spends one comparison, like every failure.
   */
  async verify(password: string, hash: string | null, who: HashTicket): Promise<boolean> {
    const tooLong = Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES;
    const ok = await this.pool.run(who, () => bcrypt.compare(password, tooLong || hash === null ? this.dummy : hash));
    return ok && hash !== null && !tooLong;
  }

  /** Throws the 503 that a hash for `who` would be refused with now (a cheap early check). */
  checkAdmission(who: Pick<HashTicket, 'project' | 'caller'>): void {
    this.pool.checkAdmission(who);
  }

  /** Hashes running and waiting now. */
  load(): { running: number; queued: number } {
    return { running: this.pool.running, queued: this.pool.queued };
  }

  /** Refuses (503) every hash still waiting, and any asked for later: the shutdown's drain has begun. */
  close(): void {
    this.pool.close();
  }
}
