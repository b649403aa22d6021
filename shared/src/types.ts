/**
 * Wire types shared by services and clients (contract §2, docs/records.md, docs/rules.md, docs/auth.md).
 */

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

export type FieldType = 'text' | 'number' | 'integer' | 'boolean' | 'timestamp' | 'json' | 'list' | 'relation';

/** What deleting a record does to the records whose relation field points at it (docs/records.md). */
export type OnDelete = 'restrict' | 'cascade' | 'set_null';

export interface FieldDefinition {
  type: FieldType;
  required?: boolean;
  unique?: boolean;
  indexed?: boolean;
  /** Least value: a number (number, integer) or an ISO 8601 string (timestamp). */
  min?: number | string;
  /** Greatest value, as `min`. */
  max?: number | string;
  /** Fewest characters (text, counted in code points) or items (list). */
  min_length?: number;
  /** Most characters (text) or items (list). */
  max_length?: number;
  /** An RE2 regular expression a text value must contain a match of (anchor it with ^…$ for all of it). */
  pattern?: string;
  /** The allowed values (text, number, integer, timestamp). */
  enum?: JsonValue[];
  /** Stored on create when the field is not given; never written into records already stored. */
  default?: JsonValue;
  /** Relation: the collection whose record ids the field holds. */
  collection?: string;
  /** Relation: 1 (default) holds one id, more holds a list of at most this many distinct ids. */
  max_items?: number;
  /** Relation: what deleting a referenced record does to this record (default restrict). */
  on_delete?: OnDelete;
  /** Relation: a write must also be able to read each record it points at (default false). */
  readable_by_writer?: boolean;
  /** Text fields only: part of the collection's full-text index (`?search=`); present only when true. */
  searchable?: boolean;
}

export interface CollectionRules {
  read?: string;
  create?: string;
  update?: string;
  delete?: string;
}

export interface Collection {
  name: string;
  fields: { [field: string]: FieldDefinition };
  rules: CollectionRules;
  revision: number;
  created_at: string;
  updated_at: string;
}

/** A JSON value as stored in a record field. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A record as returned to clients: system fields plus user fields at the top level. */
export interface RecordDoc {
  id: string;
  version: number;
  created_at: string;
  updated_at: string;
  [field: string]: JsonValue;
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

export type UserStatus = 'active' | 'disabled';

export interface User {
  id: string;
  /** Null for an anonymous user (until it adds an address). */
  email: string | null;
  email_verified: boolean;
  display_name: string | null;
  photo_url: string | null;
  status: UserStatus;
  has_password: boolean;
  /** Signed in with `POST /auth/anonymous` and not upgraded yet: no address, no password. */
  is_anonymous: boolean;
  metadata: { [key: string]: JsonValue };
  /** Custom claims set by the project's admin; copied into the user's access tokens. */
  claims: { [name: string]: JsonValue };
  last_sign_in_at: string | null;
  created_at: string;
}

export interface Session {
  user: User;
  access_token: string;
  expires_at: string;
  expires_in: number;
  refresh_token: string;
}
