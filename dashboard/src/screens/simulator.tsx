import { useState } from 'preact/hooks';
import { RULE_KINDS, call, projectPath, type RuleKind } from '../api';
import { useProjectKey } from '../project-key';
import { useSubjects } from '../subjects';
import { ErrorBox, JsonView, parseJsonInput } from '../ui';

interface Result {
  allowed: boolean;
  operation: RuleKind;
  residual?: unknown;
  reason: string;
  /** Every get()/exists() the rule made and the record it found (null: none). */
  lookups?: Array<{ collection: string; id: string; result: unknown }>;
}

/**
 * The rule simulator: an operation, a user (signed-up or hand-written) and a record or new data
 * → allowed or refused, with the residual predicate for reads (`POST …/rules/simulate`).
 */
export function Simulator({ project }: { project: string }) {
  const { key, error: keyError } = useProjectKey(project);
  const [operation, setOperation] = useState<RuleKind>('read');
  const [who, setWho] = useState('anonymous');
  const [manual, setManual] = useState('{"uid": "usr_example", "email": "a@example.com", "email_verified": true, "claims": {}}');
  const [record, setRecord] = useState('');
  const [data, setData] = useState('');
  const [result, setResult] = useState<Result | null>(null);
  const [error, setError] = useState<unknown>(null);
  const { collections, users, collection, setCollection } = useSubjects(key, project, setError);

  if (!key) return <ErrorBox error={keyError} />;

  const authOf = (): unknown => {
    if (who === 'anonymous') return null;
    if (who === 'manual') return parseJsonInput(manual, 'The user');
    const u = users.find((x) => x.id === who);
    return u ? { uid: u.id, email: u.email, email_verified: u.email_verified, claims: u.claims ?? {} } : null;
  };

  const run = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setResult(null);
    try {
      const body: { [k: string]: unknown } = { operation, auth: authOf() };
      const rec = parseJsonInput(record, 'The record');
      const dat = parseJsonInput(data, 'The data');
      if (rec !== null) body.record = rec;
      if (dat !== null) body.data = dat;
      setResult(await call<Result>(key, 'POST', projectPath(project, `/collections/${encodeURIComponent(collection)}/rules/simulate`), body));
    } catch (err) {
      setError(err);
    }
  };
  const rules = collections.find((c) => c.name === collection)?.rules ?? {};

  return (
    <section aria-labelledby="sim-h">
      <h1 id="sim-h">Rule simulator</h1>
      <form class="panel" onSubmit={run} aria-label="Simulate a request">
        <div class="row">
          <label>
            Collection
            <select name="sim-collection" value={collection} onChange={(e) => setCollection((e.currentTarget as HTMLSelectElement).value)}>
              {collections.map((c) => (
                <option key={c.name}>{c.name}</option>
              ))}
            </select>
          </label>
          <label>
            Operation
            <select name="sim-operation" value={operation} onChange={(e) => setOperation((e.currentTarget as HTMLSelectElement).value as RuleKind)}>
              {RULE_KINDS.map((k) => (
                <option key={k}>{k}</option>
              ))}
            </select>
          </label>
          <label>
            User
            <select name="sim-user" value={who} onChange={(e) => setWho((e.currentTarget as HTMLSelectElement).value)}>
              <option value="anonymous">anonymous (auth == null)</option>
              <option value="manual">hand-written claims…</option>
              {users.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.email} ({u.id})
                </option>
              ))}
            </select>
          </label>
        </div>
        <p class="hint">
          The {operation} rule: <code>{rules[operation] ?? '(none: refused to every user)'}</code>
        </p>
        {who === 'manual' && (
          <label>
            User as rules see it (auth), JSON
            <textarea name="sim-auth" rows={2} value={manual} onInput={(e) => setManual((e.currentTarget as HTMLTextAreaElement).value)} />
          </label>
        )}
        <label>
          Stored record (record.*), JSON {operation === 'update' || operation === 'delete' ? '(required)' : '(optional for read)'}
          <textarea name="sim-record" rows={3} value={record} onInput={(e) => setRecord((e.currentTarget as HTMLTextAreaElement).value)} />
        </label>
        {(operation === 'create' || operation === 'update') && (
          <label>
            New data (data.*), JSON (required)
            <textarea name="sim-data" rows={3} value={data} onInput={(e) => setData((e.currentTarget as HTMLTextAreaElement).value)} />
          </label>
        )}
        <button type="submit" disabled={!collection}>
          Simulate
        </button>
      </form>
      <ErrorBox error={error} />
      {result && (
        <div class={`verdict ${result.allowed ? 'allowed' : 'refused'}`} role="status" aria-label="Verdict">
          <p class="big">{result.allowed ? 'Allowed' : 'Refused'}</p>
          <p>{result.reason}</p>
          {result.residual !== undefined && (
            <>
              <p>Residual predicate the store runs for this user:</p>
              <JsonView value={result.residual} label="Residual predicate" />
            </>
          )}
          {result.lookups !== undefined && result.lookups.length > 0 && (
            <>
              <p>Records the rule looked up (get / exists), and what it found:</p>
              <JsonView value={result.lookups} label="Lookups" />
            </>
          )}
        </div>
      )}
    </section>
  );
}
