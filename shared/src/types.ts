/**
 * Types shared by the services. The wire types themselves (records, collections, users,
 * sessions) are declared once in @plinth/protocol and re-exported here.
 */
import type { JsonValue } from '@plinth/protocol';

export type { Collection, CollectionRules, FieldDefinition, FieldType, JsonValue, OnDelete, RecordDoc, Session, User, UserStatus } from '@plinth/protocol';

declare const projectIdBrand: unique symbol;
/** A validated project id. Every store method takes one, so a query without a tenant cannot compile. */
export type ProjectId = string & { readonly [projectIdBrand]: true };

export const PROJECT_ID_PATTERN = /^[a-z][a-z0-9-]{2,39}$/;

export function isProjectId(value: unknown): value is ProjectId {
  return typeof value === 'string' && PROJECT_ID_PATTERN.test(value);
}

/** Casts after validation; throws TypeError on a malformed id (callers validate user input first). */
export function asProjectId(value: string): ProjectId {
  if (!isProjectId(value)) throw new TypeError(`not a project id: ${value}`);
  return value;
}

export type ComparisonOp =
  | '=='
  | '!='
  | '<'
  | '<='
  | '>'
  | '>='
  | 'in'
  | 'not-in'
  | 'array-contains'
  | 'array-contains-any'
  | 'contains'
  | 'starts-with';

/** Predicate JSON shared by stores, subscribe and realtime (docs/rules.md). */
export type Predicate =
  | boolean
  | [field: string, op: ComparisonOp, value: JsonValue]
  | { and: Predicate[] }
  | { or: Predicate[] }
  | { not: Predicate };
