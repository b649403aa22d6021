import type { RecordDoc } from '@plinth/shared';

/** A lookup not read yet: the evaluation that met it is run again once it has been. */
export const PENDING: unique symbol = Symbol('lookup pending');

/**
 * What a rule's get() and exists() read through (docs/rules.md "Lookups"). Synchronous, so rules
 * stay pure functions: a lookup not read yet answers PENDING and is fetched before the rule is
 * evaluated again (rule-lookups.ts).
 */
export interface LookupReader {
  read(collection: string, id: string): RecordDoc | null | typeof PENDING;
}
