/**
 * `POST …/collections/{c}/records:import` (secret key only): restores records exactly as an
 * export wrote them — same id, version, created_at and updated_at — so export → delete the
 * collection → import gives back the same records. A record whose id is already stored is left
 * as it is and counted as `existing`, which makes a re-run of the same import create nothing.
 * User fields are validated as on create (unknown, wrong type, missing required → 400); file
 * fields take the metadata an export wrote, when records has a file storage, and only for files
 * not stored yet (files/imported-file-meta.ts): their bytes follow, checked against it.
 */
import { ConflictError, ForbiddenError, InvalidRequestError, type RecordDoc } from '@plinth/shared';
import { refuseUnknownKeys } from '../domain/collection-definition';
import { validateNewData } from '../domain/record-data';
import { acceptImportedFiles, refuseStoredFiles } from '../files/imported-file-meta';
import type { FileStorage } from '../files/storage/file-storage';
import { BatchWriteError } from '../store/batch-write';
import type { RecordStore } from '../store/record-store';
import { bypassesRules, type Caller } from './caller';
import type { CollectionOperations } from './collection-operations';
import { noPublish, type PublishChange } from './publish-change';

/** At most this many records per request; the CLI sends larger files in batches. */
export const IMPORT_BATCH_LIMIT = 1000;
const RECORD_ID = /^rec_[0-9a-hjkmnp-tv-z]{26}$/;

export interface ImportResult {
  imported: number;
  existing: number;
}

function timestamp(v: unknown, field: string, index: number): string {
  const ms = typeof v === 'string' && /(Z|[+-]\d\d:\d\d)$/.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) {
    throw new InvalidRequestError(`records[${index}].${field} must be an ISO 8601 timestamp with a time zone.`, { index, field });
  }
  return new Date(ms).toISOString();
}

export class RecordImport {
  constructor(
    private readonly store: RecordStore,
    private readonly collections: CollectionOperations,
    private readonly publish: PublishChange = noPublish,
    /** Where records' files are stored; without it a file field's value is refused, as on create. */
    private readonly files?: FileStorage,
  ) {}

  async import(caller: Caller, name: string, rawBody: unknown): Promise<ImportResult> {
    if (!bypassesRules(caller)) throw new ForbiddenError('Importing records needs the secret key.');
    const collection = await this.collections.load(caller.project, name);
    if (typeof rawBody !== 'object' || rawBody === null || Array.isArray(rawBody)) {
      throw new InvalidRequestError('The body must be a JSON object like {"records":[...]}.', { field: 'body' });
    }
    const b = rawBody as { [k: string]: unknown };
    refuseUnknownKeys(b, ['records']);
    if (!Array.isArray(b.records) || b.records.length > IMPORT_BATCH_LIMIT) {
      throw new InvalidRequestError(`"records" must be an array of at most ${IMPORT_BATCH_LIMIT} records.`, { field: 'records' });
    }
    // Validate the whole batch first, so a bad record imports nothing of its batch.
    const docs: RecordDoc[] = b.records.map((raw: unknown, index) => {
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
        throw new InvalidRequestError(`records[${index}] must be an object.`, { index });
      }
      const { id, version, created_at, updated_at, ...data } = raw as { [k: string]: unknown };
      if (typeof id !== 'string' || !RECORD_ID.test(id)) {
        throw new InvalidRequestError(`records[${index}].id must be a record id (rec_…).`, { index, field: 'id' });
      }
      if (!Number.isSafeInteger(version) || (version as number) < 1) {
        throw new InvalidRequestError(`records[${index}].version must be a positive integer.`, { index, field: 'version' });
      }
      return {
        id,
        version: version as number,
        created_at: timestamp(created_at, 'created_at', index),
        updated_at: timestamp(updated_at, 'updated_at', index),
        ...validateNewData(collection, this.files ? acceptImportedFiles(collection, data, index) : data),
      };
    });
    const result: ImportResult = { imported: 0, existing: 0 };
    const fresh: RecordDoc[] = [];
    for (const doc of docs) {
      if (await this.store.getRecord(caller.project, collection, doc.id)) result.existing++;
      else fresh.push(doc);
    }
    if (this.files) await refuseStoredFiles(this.files, caller.project, collection, fresh);
    // Realtime subscribers see an imported record as a create.
    const writes = fresh.map((doc) => ({ op: 'create' as const, collection, record: doc, event: { project: caller.project, collection: name, kind: 'create' as const, record: doc, committed_at: Date.now() } }));
    if (writes.length === 0) return result;
    try {
      // The whole batch in one transaction: a store's batch write, far faster than one commit per record.
      await this.store.applyBatch(caller.project, writes);
      result.imported += writes.length;
      for (const w of writes) await this.publish(w.event);
      return result;
    } catch (err) {
      // A record of the batch was written meanwhile (another import), or an id is twice in it:
      // nothing of the batch was written; record by record, as asked.
      if (!(err instanceof BatchWriteError)) throw err;
    }
    for (const { record: doc, event } of writes) {
      try {
        await this.store.insertRecord(caller.project, collection, doc, undefined, event);
        result.imported++;
        await this.publish(event);
      } catch (err) {
        // Another import of the same id won the race: the record is there, as this one asks.
        if (err instanceof ConflictError && (await this.store.getRecord(caller.project, collection, doc.id))) result.existing++;
        else throw err;
      }
    }
    return result;
  }
}
