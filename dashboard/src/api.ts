/** A tiny typed client of Plinth's public HTTP API (same origin as the dashboard). */
import type { FieldDefinition, FieldType, JsonValue } from '@plinth/protocol';

/** The wire types (declared once in @plinth/protocol). */
export type { FieldDefinition, FieldType, RecordDoc, User } from '@plinth/protocol';

export interface ApiErrorBody {
  error: string;
  message: string;
  details?: { [k: string]: unknown };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
  ) {
    super(body.message);
  }
}

/** Dispatched on window when the API says the operator session is over. */
export const SESSION_ENDED = 'plinth:session-ended';

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** Calls the API with a bearer credential (none when `key` is empty); resolves the JSON answer, rejects with ApiError (the API's own message). */
export async function call<T>(key: string, method: Method, path: string, body?: unknown): Promise<T> {
  const headers: { [k: string]: string } = key === '' ? {} : { Authorization: `Bearer ${key}` };
  const form = body instanceof FormData;
  if (body !== undefined && !form) headers['Content-Type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : form ? body : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, { error: 'unavailable', message: 'The server cannot be reached.' });
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = null;
  }
  if (!res.ok) {
    const b = json as Partial<ApiErrorBody> | null;
    // An operator session that ended (expired, revoked, operator disabled): back to sign-in.
    if (res.status === 401 && key.startsWith('ops_') && /session has expired|operator is disabled/.test(String(b?.message))) dispatchEvent(new Event(SESSION_ENDED));
    throw new ApiError(res.status, {
      error: typeof b?.error === 'string' ? b.error : 'internal',
      message: typeof b?.message === 'string' ? b.message : `HTTP ${res.status}`,
      details: b?.details,
    });
  }
  return json as T;
}

/**
 * A record write with files, as `multipart/form-data`: the `data` part holds the JSON body's
 * `data`, one part per chosen file named after its field. Answers as `call` does.
 */
export async function upload<T>(key: string, method: 'POST' | 'PATCH', path: string, data: { [k: string]: Json }, files: { [field: string]: File[] }): Promise<T> {
  const form = new FormData();
  form.append('data', JSON.stringify(data));
  for (const [field, list] of Object.entries(files)) for (const f of list) form.append(field, f, f.name);
  return call<T>(key, method, path, form);
}

export const projectPath = (project: string, rest: string): string => `/v1/projects/${encodeURIComponent(project)}${rest}`;

export const FIELD_TYPES: readonly FieldType[] = ['text', 'number', 'integer', 'boolean', 'timestamp', 'json', 'list', 'file', 'files'];
export const FIELD_OPTIONS = ['required', 'unique', 'indexed'] as const;
export type FieldOption = (typeof FIELD_OPTIONS)[number];

/** What a record's file field holds per file (files.md); a `files` field holds a list. */
export type { FileMeta } from '@plinth/protocol';

export const isFileField = (def: FieldDefinition): boolean => def.type === 'file' || def.type === 'files';
export const RULE_KINDS = ['read', 'create', 'update', 'delete'] as const;
export type RuleKind = (typeof RULE_KINDS)[number];
export type Rules = Partial<Record<RuleKind, string>>;

export interface Collection {
  name: string;
  fields: { [name: string]: FieldDefinition };
  rules: Rules;
  revision: number;
}

export type Json = JsonValue;

/** A project and its keys as the operator API shows them (never a key's value). */
export type { Project, ProjectKey as KeyView } from '@plinth/protocol';

/** One audit entry (docs/operators.md "The audit log"). */
export type { AuditEntry } from '@plinth/protocol';
