/**
 * The body of `POST /v1/projects/{p}/batch` (docs/records.md "Batch writes"), checked before
 * anything is read: every problem is a 400 whose `details.index` names the operation.
 */
import { InvalidRequestError, PlinthError, type ErrorDetails } from '@plinth/shared';
import { unknownParameter } from '../domain/unknown-parameter';

/** Operations a batch holds by default; PLINTH_MAX_BATCH_OPERATIONS raises it up to the ceiling. */
export const DEFAULT_MAX_BATCH_OPERATIONS = 100;
export const MAX_BATCH_OPERATIONS_CEILING = 500;

export type BatchOpRequest =
  | { op: 'create'; collection: string; data: unknown }
  | { op: 'update'; collection: string; id: string; data: unknown; version?: number }
  | { op: 'delete'; collection: string; id: string; version?: number };

const KEYS: Record<BatchOpRequest['op'], readonly string[]> = {
  create: ['op', 'collection', 'data'],
  update: ['op', 'collection', 'id', 'data', 'version'],
  delete: ['op', 'collection', 'id', 'version'],
};

/** `err` as the answer for the batch operation at `index`: the same code, `details.index` added. */
export function atIndex(err: unknown, index: number): unknown {
  if (!(err instanceof PlinthError)) return err;
  const details: ErrorDetails = { ...(err.details ?? {}), index };
  return new PlinthError(err.code, `operations[${index}]: ${err.message}`, details, err.headers);
}

function isObject(v: unknown): v is { [k: string]: unknown } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function bad(index: number, message: string, field: string): InvalidRequestError {
  return new InvalidRequestError(`operations[${index}]: ${message}`, { index, field });
}

export function parseBatchRequest(body: unknown, maxOperations: number): BatchOpRequest[] {
  if (!isObject(body)) throw new InvalidRequestError('The body must be a JSON object like {"operations":[...]}.', { field: 'body' });
  for (const key of Object.keys(body)) {
    if (key !== 'operations') throw unknownParameter(key);
  }
  const ops = body.operations;
  if (!Array.isArray(ops) || ops.length === 0) {
    throw new InvalidRequestError('"operations" must be a non-empty array of operations.', { field: 'operations' });
  }
  if (ops.length > maxOperations) {
    throw new InvalidRequestError(`A batch holds at most ${maxOperations} operations; this one has ${ops.length}.`, {
      field: 'operations',
      limit: maxOperations,
      setting: 'PLINTH_MAX_BATCH_OPERATIONS',
    });
  }
  const targets = new Set<string>();
  return ops.map((raw: unknown, i): BatchOpRequest => {
    if (!isObject(raw)) throw bad(i, 'each operation must be a JSON object.', 'operations');
    const op = raw.op;
    if (op !== 'create' && op !== 'update' && op !== 'delete') throw bad(i, '"op" must be create, update or delete.', 'op');
    for (const key of Object.keys(raw)) {
      if (!KEYS[op].includes(key)) throw bad(i, `unknown parameter "${key}" for ${op}.`, key);
    }
    if (typeof raw.collection !== 'string' || raw.collection === '') throw bad(i, '"collection" must be a collection name.', 'collection');
    const collection = raw.collection;
    if (op === 'create') return { op, collection, data: raw.data ?? {} };
    if (typeof raw.id !== 'string' || raw.id === '') throw bad(i, '"id" must be a record id.', 'id');
    const id = raw.id;
    const version = raw.version;
    if (version !== undefined && (!Number.isSafeInteger(version) || (version as number) < 1)) {
      throw bad(i, '"version" must be a positive integer.', 'version');
    }
    // Every operation is checked against the state before the batch: one record, one change.
    const target = `${collection}\u0000${id}`;
    if (targets.has(target)) throw bad(i, `record "${id}" of ${collection} is already changed by an earlier operation of this batch.`, 'id');
    targets.add(target);
    const v = version === undefined ? {} : { version: version as number };
    return op === 'update' ? { op, collection, id, data: raw.data, ...v } : { op, collection, id, ...v };
  });
}
