import type { JsonValue } from './json';

export type FieldType = 'text' | 'number' | 'integer' | 'boolean' | 'timestamp' | 'json' | 'list' | 'relation' | 'file' | 'files';

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
  /** Relation: 1 (default) holds one id, more holds a list of at most this many distinct ids. Files: most files (1 for `file`). */
  max_items?: number;
  /** File fields: the largest file in bytes (docs/files.md "Fields"). */
  max_size?: number;
  /** File fields: the allowed types, checked against the bytes; any when empty. */
  mime_types?: string[];
  /** File fields: the thumbnail sizes a download may ask for (`100x100`, `0x300`, `100x100f`). */
  thumbs?: string[];
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

/** The fields every record carries besides its own. */
export interface SystemFields {
  id: string;
  version: number;
  created_at: string;
  updated_at: string;
}

/** A record as returned to clients: system fields plus user fields at the top level. */
export interface RecordDoc {
  id: string;
  version: number;
  created_at: string;
  updated_at: string;
  [field: string]: JsonValue;
}

/** What a record's `file` field holds (a `files` field holds a list of these); never the bytes. */
export interface FileMeta {
  /** The generated name the file is stored and downloaded under. */
  name: string;
  /** The name the client sent, for display only (never a path). */
  original_name: string;
  size: number;
  /** Detected from the bytes, not the type the client declared. */
  type: string;
  /** Lower-case hex SHA-256 of the bytes. */
  sha256: string;
  created_at: string;
}
