/**
 * Collection management (docs/records.md): list and get with any project key; create, change and
 * delete with the secret key. Every saved change increments `revision`.
 */
import { ConflictError, ForbiddenError, InvalidRequestError, NotFoundError, type Collection, type ProjectId } from '@plinth/shared';
import type { AccessPolicy } from '../domain/access-policy';
import { canonicalJson } from '../domain/canonical-json';
import {
  COLLECTION_NAME,
  mergeFields,
  mergeRules,
  objectParam,
  parseCollectionName,
  parseFields,
  parseRules,
  refuseUnknownKeys,
} from '../domain/collection-definition';
import type { RecordStore } from '../store/record-store';
import type { Caller } from './caller';
import { checkRelationTargets } from './relation-targets';
import { noPublish, type PublishChange } from './publish-change';

const SAVE_ATTEMPTS = 3;

function requireSecret(caller: Caller): void {
  if (caller.keyKind !== 'secret') throw new ForbiddenError('Managing collections needs the secret key.');
}

export class CollectionOperations {
  constructor(
    private readonly store: RecordStore,
    private readonly policy: AccessPolicy,
    private readonly clock: () => Date = () => new Date(),
    private readonly publish: PublishChange = noPublish,
  ) {}

  /** The collection, or 404 (also for a name that could never exist). */
  async load(project: ProjectId, name: string): Promise<Collection> {
    const found = COLLECTION_NAME.test(name) ? await this.store.getCollection(project, name) : null;
    if (!found) throw new NotFoundError(`Collection "${name}" does not exist.`, { collection: name });
    return found;
  }

  list(caller: Caller): Promise<Collection[]> {
    return this.store.listCollections(caller.project);
  }

  async create(caller: Caller, body: unknown): Promise<Collection> {
    requireSecret(caller);
    const b = objectParam('body', body ?? {});
    refuseUnknownKeys(b, ['name', 'fields', 'rules']);
    const name = parseCollectionName(b.name);
    if (b.fields === undefined) throw new InvalidRequestError('"fields" is required (a JSON object of field definitions).', { field: 'fields' });
    const fields = parseFields(b.fields);
    const rules = b.rules === undefined ? {} : mergeRules({}, parseRules(b.rules));
    this.policy.validateRules({ name, fields, rules });
    await checkRelationTargets(this.store, caller.project, name, fields);
    const now = this.clock().toISOString();
    const collection: Collection = { name, fields, rules, revision: 1, created_at: now, updated_at: now };
    await this.store.createCollection(caller.project, collection);
    return collection;
  }

  async update(caller: Caller, name: string, body: unknown): Promise<Collection> {
    requireSecret(caller);
    const b = objectParam('body', body ?? {});
    refuseUnknownKeys(b, ['fields', 'rules']);
    const rulesPatch = b.rules === undefined ? {} : parseRules(b.rules, true);
    for (let attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
      const current = await this.load(caller.project, name);
      const { fields, removed } = b.fields === undefined ? { fields: current.fields, removed: [] } : mergeFields(current.fields, b.fields);
      const rules = mergeRules(current.rules, rulesPatch);
      if (canonicalJson({ fields, rules }) === canonicalJson({ fields: current.fields, rules: current.rules })) return current;
      this.policy.validateRules({ name, fields, rules });
      await checkRelationTargets(this.store, caller.project, name, fields);
      const next: Collection = { ...current, fields, rules, revision: current.revision + 1, updated_at: this.clock().toISOString() };
      const event = { project: caller.project, collection: name, kind: 'collection' as const, revision: next.revision, committed_at: Date.now() };
      if (await this.store.updateCollection(caller.project, { next, expectedRevision: current.revision, removedFields: removed }, event)) {
        await this.publish(event);
        return next;
      }
    }
    throw new ConflictError(`Collection "${name}" is being changed concurrently; retry.`, { collection: name });
  }

  async delete(caller: Caller, name: string): Promise<void> {
    requireSecret(caller);
    const event = { project: caller.project, collection: name, kind: 'collection' as const, revision: null, committed_at: Date.now() };
    if (!COLLECTION_NAME.test(name) || !(await this.store.deleteCollection(caller.project, name, event))) {
      throw new NotFoundError(`Collection "${name}" does not exist.`, { collection: name });
    }
    await this.publish(event);
  }
}
