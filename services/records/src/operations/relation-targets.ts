/**
 * A relation field must point at a collection of the same project that exists, or at its own
 * collection (docs/records.md, "Relations"): checked when a definition is saved.
 */
import { InvalidRequestError, type FieldDefinition, type ProjectId } from '@plinth/shared';
import type { RecordStore } from '../store/record-store';

export async function checkRelationTargets(
  store: RecordStore,
  project: ProjectId,
  name: string,
  fields: { [field: string]: FieldDefinition },
): Promise<void> {
  for (const [field, def] of Object.entries(fields)) {
    if (def.type !== 'relation' || def.collection === undefined || def.collection === name) continue;
    if (!(await store.getCollection(project, def.collection))) {
      throw new InvalidRequestError(`Field "${field}" points at collection "${def.collection}", which does not exist.`, {
        field,
        key: 'collection',
      });
    }
  }
}
