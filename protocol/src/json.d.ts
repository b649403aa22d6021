/** A JSON value, as a record field or a user's metadata holds it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
