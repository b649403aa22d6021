import type { Collection } from '../api';
import { OPS, SYSTEM, type Cond, type Query } from './records-query';

/** The records screen's query form: where builder, search box (searchable fields), order, page size. */
export function QueryForm(props: { collection: Collection; draft: Query; onDraft: (q: Query) => void; onApply: () => void }) {
  const { collection, draft, onDraft: setDraft } = props;
  const orderable = [...Object.entries(collection.fields).filter(([, d]) => d.type !== 'json' && d.type !== 'list').map(([n]) => n), ...SYSTEM];
  const searchable = Object.values(collection.fields).some((d) => d.searchable === true);
  const setCond = (i: number, patch: Partial<Cond>) => setDraft({ ...draft, where: draft.where.map((c, j) => (j === i ? { ...c, ...patch } : c)) });
  return (
    <form
      class="panel query"
      aria-label="Query"
      onSubmit={(e) => {
        e.preventDefault();
        props.onApply();
      }}
    >
      {draft.where.map((c, i) => (
        <div class="row" key={i}>
          <label>
            Where field
            <select value={c.field} onChange={(e) => setCond(i, { field: (e.currentTarget as HTMLSelectElement).value })}>
              {[...Object.keys(collection.fields), ...SYSTEM].map((f) => (
                <option key={f}>{f}</option>
              ))}
            </select>
          </label>
          <label>
            Operator
            <select value={c.op} onChange={(e) => setCond(i, { op: (e.currentTarget as HTMLSelectElement).value })}>
              {OPS.map((o) => (
                <option key={o}>{o}</option>
              ))}
            </select>
          </label>
          <label>
            Value
            <input value={c.value} onInput={(e) => setCond(i, { value: (e.currentTarget as HTMLInputElement).value })} />
          </label>
          <button type="button" onClick={() => setDraft({ ...draft, where: draft.where.filter((_, j) => j !== i) })}>
            Remove condition
          </button>
        </div>
      ))}
      {searchable && (
        <div class="row">
          <label>
            Search
            <input
              name="search"
              type="search"
              maxLength={256}
              placeholder="words in the searchable fields"
              value={draft.search}
              onInput={(e) => {
                const search = (e.currentTarget as HTMLInputElement).value;
                // A search orders by relevance unless another order was chosen; without one,
                // "relevance" falls back to the default order.
                let orderBy = draft.orderBy;
                if (search.trim() && !draft.search.trim() && orderBy === 'created_at') orderBy = '';
                if (!search.trim() && orderBy === '') orderBy = 'created_at';
                setDraft({ ...draft, search, orderBy });
              }}
            />
          </label>
        </div>
      )}
      <div class="row">
        <button type="button" onClick={() => setDraft({ ...draft, where: [...draft.where, { field: Object.keys(collection.fields)[0] ?? 'id', op: '==', value: '' }] })}>
          Add condition
        </button>
        <label>
          Order by
          <select name="orderBy" value={draft.orderBy} onChange={(e) => setDraft({ ...draft, orderBy: (e.currentTarget as HTMLSelectElement).value })}>
            {draft.search.trim() && <option value="">relevance</option>}
            {orderable.map((f) => (
              <option key={f}>{f}</option>
            ))}
          </select>
        </label>
        <label>
          Direction
          <select name="direction" value={draft.direction} onChange={(e) => setDraft({ ...draft, direction: (e.currentTarget as HTMLSelectElement).value as 'asc' | 'desc' })}>
            <option>asc</option>
            <option>desc</option>
          </select>
        </label>
        <label>
          Page size
          <input name="limit" type="number" min={1} max={1000} value={draft.limit} onInput={(e) => setDraft({ ...draft, limit: Number((e.currentTarget as HTMLInputElement).value) })} />
        </label>
        <button type="submit">Apply</button>
      </div>
    </form>
  );
}
