import type { KeyKind } from '@plinth/shared';

/** Connection quotas of one realtime process (docs/realtime.md "Quotas"). */
export interface ConnectionQuotaLimits {
  /** Connections of the whole process: below its file-descriptor limit, so /healthz always has one. */
  perProcess: number;
  /** Connections of one project. */
  perProject: number;
  /** Public-key connections of one project: the rest of the project's share is for secret-key (server) ones. */
  publicPerProject: number;
  /** Public-key connections of one project from one client address, signed in or not. */
  perAddress: number;
  /** Connections signed in as one user of a project (counted from `auth`). */
  perUser: number;
}

/** Why a connection is refused, with the close code the client receives. */
export interface Refusal {
  code: number;
  message: string;
  limit: number;
}

/** What a connection counts against. */
export interface QuotaHolder {
  project: string;
  keyKind: KeyKind;
  address: string;
  /** The user it signed in as (the token's `sub`), or null. */
  user: string | null;
}

/**
 * Counts the connections of one process per project, key kind, client address and user, and
 * refuses the one that would pass a share: one public key (or one address) can never take the
 * project's slots from its servers, its other users or the process's health check. O(1) per
 * connection; counters are removed when they reach zero.
 */
export class ConnectionQuotas {
  private total = 0;
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly limits: ConnectionQuotaLimits,
    private readonly codes: { processFull: number; quota: number },
  ) {}

  /** Takes the slots of a new connection, or says which share is full (nothing taken). */
  admit(c: QuotaHolder): Refusal | null {
    const l = this.limits;
    if (this.total >= l.perProcess) return { code: this.codes.processFull, message: 'This realtime server is full; connect again later.', limit: l.perProcess };
    if (this.count(`p\n${c.project}`) >= l.perProject) return this.refusal(`The project has reached its ${l.perProject} realtime connections.`, l.perProject);
    if (c.keyKind === 'public') {
      if (this.count(`k\n${c.project}`) >= l.publicPerProject) return this.refusal(`The project's public key has reached its ${l.publicPerProject} realtime connections.`, l.publicPerProject);
      if (this.count(`a\n${c.project}\n${c.address}`) >= l.perAddress) return this.refusal(`This address has reached its ${l.perAddress} realtime connections to the project.`, l.perAddress);
    }
    this.total++;
    this.add(`p\n${c.project}`, 1);
    if (c.keyKind === 'public') {
      this.add(`k\n${c.project}`, 1);
      this.add(`a\n${c.project}\n${c.address}`, 1);
    }
    return null;
  }

  /** The connection signs in as `user` (or out, with null): refused when that user's share is full. */
  signIn(c: QuotaHolder, user: string | null): Refusal | null {
    if (user === c.user) return null;
    if (user !== null && this.count(`u\n${c.project}\n${user}`) >= this.limits.perUser) {
      return this.refusal(`This user has reached its ${this.limits.perUser} realtime connections.`, this.limits.perUser);
    }
    if (c.user !== null) this.add(`u\n${c.project}\n${c.user}`, -1);
    if (user !== null) this.add(`u\n${c.project}\n${user}`, 1);
    c.user = user;
    return null;
  }

  /** Gives back every slot the connection held. */
  release(c: QuotaHolder): void {
    this.total--;
    this.add(`p\n${c.project}`, -1);
    if (c.keyKind === 'public') {
      this.add(`k\n${c.project}`, -1);
      this.add(`a\n${c.project}\n${c.address}`, -1);
    }
    if (c.user !== null) this.add(`u\n${c.project}\n${c.user}`, -1);
    c.user = null;
  }

  /** Connections of the project on this process. */
  ofProject(project: string): number {
    return this.count(`p\n${project}`);
  }

  private refusal(message: string, limit: number): Refusal {
    return { code: this.codes.quota, message, limit };
  }

  private count(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  private add(key: string, n: number): void {
    const next = this.count(key) + n;
    if (next > 0) this.counts.set(key, next);
    else this.counts.delete(key);
  }
}
