import type { SystemFields } from '@plinth/protocol';

/** The fields every record carries besides its own (`id`, `version`, `created_at`, `updated_at`). */
export type { SystemFields } from '@plinth/protocol';

/**
 * A record reached through a relation and expanded (`expand`): a record of another collection,
 * whose fields the client does not know statically.
 */
export type ExpandedRecord = SystemFields & { [field: string]: unknown; expand?: Expanded };

/**
 * What `expand` adds to a record: per relation field asked for, the record it points at (a single
 * relation) or the records (a list relation), each one the caller may read — a record hidden by
 * its read rule, or gone, is left out.
 */
export type Expanded = { [field: string]: ExpandedRecord | ExpandedRecord[] };

/** A record as Plinth returns it: the system fields and the user fields at the top level. */
export type PlinthRecord<T> = T & SystemFields & { expand?: Expanded };

/** Fields a write may carry: any subset of T; `null` removes an optional field on update. */
export type RecordData<T> = { [K in keyof T]?: T[K] | null };

/**
 * `contains` and `starts-with` compare text ignoring ASCII case (`"MILK"` finds `"buy milk"`);
 * the operand is plain text, never a pattern.
 */
export type WhereOp = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'not-in' | 'array-contains' | 'array-contains-any' | 'contains' | 'starts-with';

export type Condition = [field: string, op: WhereOp, value: unknown];

export type Direction = 'asc' | 'desc';

export interface Page<T> {
  records: PlinthRecord<T>[];
  /** Pass back as `get({ cursor })` for the next page; null on the last page. */
  cursor: string | null;
  /** With `get({ count: true })`: how many records the whole query matches. */
  total?: number;
}

/** The number and integer fields of T (any field name when T is not known). */
export type NumberField<T> = string extends keyof T ? string : { [K in keyof T]-?: NonNullable<T[K]> extends number ? K : never }[keyof T] & string;

/** What `Query.aggregate` answers: only what was asked for. */
export interface Aggregates<S extends string, A extends string> {
  count?: number;
  /** Per field, the sum of its values (missing and null skipped; 0 over nothing). */
  sum?: Record<S, number>;
  /** Per field, the mean of its values (missing and null skipped; null over nothing). */
  avg?: Record<A, number | null>;
}

/** Supplies the user token for record calls (`X-Db-User-Token`), or null for none. */
export type TokenSource = (signal?: AbortSignal) => Promise<string | null>;

/** What a query asks for: the collection, its conditions, order, page size, expansions and search words. */
export interface QuerySpec {
  collection: string;
  where: Condition[];
  orderBy?: string;
  direction?: Direction;
  limit?: number;
  /** Relation fields to expand (`author`, `post.author`: two levels at most). */
  expand?: string[];
  /** Full-text search words (lists only; realtime subscriptions take `where` alone). */
  search?: string;
}
