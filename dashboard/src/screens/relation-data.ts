/**
 * What the record editor shows for relation fields (records.md, "Relations"): the ids of the
 * target collection's newest records as the picker's choices, and, for a record being edited,
 * the records its relations point at (`?expand=`).
 */
import { useEffect, useState } from 'preact/hooks';
import { call, type Collection, type Json, type RecordDoc } from '../api';
import type { RelationChoices } from './record-form';

/** How many ids of a target collection the picker offers. */
const CHOICES = 100;

export function useRelationData(base: string, secret: string, collection: Collection, recordId: string | null) {
  const [choices, setChoices] = useState<RelationChoices>({});
  const [expanded, setExpanded] = useState<{ [field: string]: Json } | null>(null);
  const relations = Object.entries(collection.fields).filter(([, d]) => d.type === 'relation' && d.collection);
  useEffect(() => {
    if (relations.length === 0) return;
    let live = true;
    void (async () => {
      const next: RelationChoices = {};
      for (const [field, def] of relations) {
        const target = base.replace(/\/collections\/[^/]+\/records$/, `/collections/${encodeURIComponent(def.collection as string)}/records`);
        try {
          const page = await call<{ records: RecordDoc[] }>(secret, 'GET', `${target}?orderBy=created_at&direction=desc&limit=${CHOICES}`);
          next[field] = page.records.map((r) => r.id);
        } catch {
          next[field] = [];
        }
      }
      if (recordId) {
        try {
          const expand = relations.map(([f]) => f).join(',');
          const got = await call<{ record: RecordDoc }>(secret, 'GET', `${base}/${encodeURIComponent(recordId)}?expand=${encodeURIComponent(expand)}`);
          if (live) setExpanded((got.record.expand as { [field: string]: Json } | undefined) ?? {});
        } catch {
          if (live) setExpanded(null);
        }
      }
      if (live) setChoices(next);
    })();
    return () => {
      live = false;
    };
  }, [base, recordId, collection.name]);
  return { choices, expanded };
}
