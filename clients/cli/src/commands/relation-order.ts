/**
 * `plinth apply` creates collections that relation fields point at before the collections that
 * point at them (a relation's `collection` must exist when the field is saved): the steps keep
 * the file's order, except that a collection's creation moves ahead of every step whose fields
 * name it as a relation target.
 */
interface OrderedStep {
  method: 'POST' | 'PATCH' | 'DELETE';
  collection: string;
  body?: unknown;
}

/** The collections the relation fields of a step's body point at (its own excluded). */
function targetsOf(step: OrderedStep): string[] {
  const body = step.body as { fields?: { [field: string]: { type?: unknown; collection?: unknown } | null } } | undefined;
  const targets: string[] = [];
  for (const def of Object.values(body?.fields ?? {})) {
    if (def && def.type === 'relation' && typeof def.collection === 'string' && def.collection !== step.collection) targets.push(def.collection);
  }
  return targets;
}

export function orderByRelations<S extends OrderedStep>(steps: S[]): S[] {
  const creates = new Map(steps.filter((s) => s.method === 'POST').map((s) => [s.collection, s]));
  const out: S[] = [];
  const placed = new Set<S>();
  const visiting = new Set<S>();
  const place = (step: S): void => {
    if (placed.has(step) || visiting.has(step)) return; // a cycle keeps the file's order
    visiting.add(step);
    for (const target of targetsOf(step)) {
      const create = creates.get(target);
      if (create) place(create);
    }
    visiting.delete(step);
    placed.add(step);
    out.push(step);
  };
  for (const step of steps) place(step);
  return out;
}
