/** The fields every record carries besides its own. */
export interface SystemFields {
  id: string;
  version: number;
  created_at: string;
  updated_at: string;
}

/** A record as Plinth returns it: the system fields and the user fields at the top level. */
export type PlinthRecord<T> = T & SystemFields;

/** Fields a write may carry: any subset of T; `null` removes an optional field on update. */
export type RecordData<T> = { [K in keyof T]?: T[K] | null };

export type WhereOp = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'not-in' | 'array-contains' | 'array-contains-any';

export type Condition = [field: string, op: WhereOp, value: unknown];

export type Direction = 'asc' | 'desc';

export interface Page<T> {
  records: PlinthRecord<T>[];
  /** Pass back as `get({ cursor })` for the next page; null on the last page. */
  cursor: string | null;
}

/** Supplies the user token for record calls (`X-Db-User-Token`), or null for none. */
export type TokenSource = (signal?: AbortSignal) => Promise<string | null>;
