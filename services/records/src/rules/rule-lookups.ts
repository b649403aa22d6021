import { ForbiddenError, type RecordDoc } from '@plinth/shared';
import { PENDING, type LookupReader } from './lookup-reader';

/** Lookups one single-record operation may make (docs/rules.md "Lookups"). */
export const MAX_LOOKUPS_PER_OPERATION = 10;
/** Lookups one batch may make, all its operations together. */
export const MAX_LOOKUPS_PER_BATCH = 20;

/** Reads one stored record, without applying its own rules; null when it or its collection is absent. */
export type FetchRecord = (collection: string, id: string) => Promise<RecordDoc | null>;

/** One lookup a request made, and what it found (the simulator shows these). */
export interface LookupTrace {
  collection: string;
  id: string;
  /** The record as the API shows it, or null when absent. */
  result: RecordDoc | null;
}

/** Too many distinct lookups: the request is refused as a whole (403). */
export class LookupLimitError extends ForbiddenError {
  constructor(limit: number, scope: 'operation' | 'batch') {
    super(
      `Security rules read more than ${limit} other records (get/exists) for this ${scope}; ` +
        `at most ${limit} distinct lookups are allowed per ${scope}.`,
      { reason: 'lookup_limit', limit },
    );
  }
}

const keyOf = (collection: string, id: string): string => `${collection}\u0000${id}`;

/**
 * The lookups of one request, memoized: each distinct (collection, id) is read from the store
 * once however often rules ask for it. At most `limit` distinct lookups; past it every further
 * one is an ERROR (denies) and `settle` refuses the request with LookupLimitError.
 */
export class RuleLookups implements LookupReader {
  private readonly results = new Map<string, LookupTrace>();
  private readonly wanted = new Map<string, { collection: string; id: string }>();
  private exceeded = false;

  constructor(
    private readonly fetch: FetchRecord,
    readonly limit: number = MAX_LOOKUPS_PER_OPERATION,
    private readonly scope: 'operation' | 'batch' = 'operation',
  ) {}

  read(collection: string, id: string): RecordDoc | null | typeof PENDING {
    const key = keyOf(collection, id);
    const known = this.results.get(key);
    if (known) return known.result;
    if (!this.wanted.has(key)) {
      if (this.results.size + this.wanted.size >= this.limit) {
        this.exceeded = true;
        return PENDING;
      }
      this.wanted.set(key, { collection, id });
    }
    return PENDING;
  }

  /** Every lookup read so far, in the order first asked. */
  traces(): LookupTrace[] {
    return [...this.results.values()];
  }

  /**
   * Runs `evaluate` (synchronous rule evaluation reading through this object) until it has every
   * lookup it asks for: after each run the lookups it met for the first time are read, all at
   * once, and it runs again. Nested lookups (an id that is itself looked up) take one run each.
   * @throws LookupLimitError when the rules asked for more than `limit` distinct records.
   */
  async settle<T>(evaluate: () => T): Promise<T> {
    for (;;) {
      const result = evaluate();
      if (this.exceeded) throw new LookupLimitError(this.limit, this.scope);
      if (this.wanted.size === 0) return result;
      const batch = [...this.wanted.entries()];
      this.wanted.clear();
      const found = await Promise.all(batch.map(([, { collection, id }]) => this.fetch(collection, id)));
      batch.forEach(([key, { collection, id }], i) => this.results.set(key, { collection, id, result: found[i] ?? null }));
    }
  }
}
