/** The pieces predicates and text operators build SQL from: bound values and field expressions. */
import { isSystemField, type Scalar } from '../record-shape';

export interface SqlFragment {
  sql: string;
  params: SqlValue[];
}
export type SqlValue = string | number;

/** The SQL expression of a field: a column for system fields, a JSON path for user fields. */
export function fieldExpr(field: string): string {
  return isSystemField(field) ? field : `json_extract(data, '$.${field}')`;
}

/** SQLite has no boolean: JSON true/false read back as 1/0. */
export function bindValue(v: Scalar): SqlValue {
  return typeof v === 'boolean' ? (v ? 1 : 0) : v;
}
