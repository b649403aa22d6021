import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, RULE_KINDS, call, projectPath, type FieldDefinition, type RuleKind, type Rules } from '../api';

export interface RuleProblem {
  message: string;
  position: number | null;
}

/** Completions offered under each rule: the fields as record.* and data.*, and auth.*. */
function completions(kind: RuleKind, fields: string[]): string[] {
  const out = ['auth != null', 'auth.uid', 'auth.email', 'auth.email_verified', 'auth.claims.', 'request.time'];
  if (kind !== 'create') out.push(...fields.map((f) => `record.${f}`));
  if (kind === 'create' || kind === 'update') out.push(...fields.map((f) => `data.${f}`));
  return out;
}

/**
 * The four rules, each checked as it is typed by the API's own validation
 * (`POST …/collections/{c}/rules/validate`), the error marked at the position the API names.
 */
export function RulesEditor(props: {
  project: string;
  secret: string;
  collection: string;
  fields: { [name: string]: FieldDefinition };
  rules: Rules;
  onChange: (rules: Rules) => void;
  onProblems: (p: Partial<Record<RuleKind, RuleProblem>>) => void;
}) {
  const [problems, setProblems] = useState<Partial<Record<RuleKind, RuleProblem>>>({});
  const [checking, setChecking] = useState(false);
  const timer = useRef<number | undefined>(undefined);
  const name = props.collection || 'draft';
  const fieldNames = Object.keys(props.fields).filter((f) => f.trim() !== '');

  useEffect(() => {
    window.clearTimeout(timer.current);
    setChecking(true);
    timer.current = window.setTimeout(async () => {
      const found: Partial<Record<RuleKind, RuleProblem>> = {};
      for (const kind of RULE_KINDS) {
        const source = props.rules[kind];
        if (source === undefined || source.trim() === '') continue;
        try {
          await call(props.secret, 'POST', projectPath(props.project, `/collections/${encodeURIComponent(name)}/rules/validate`), {
            fields: props.fields,
            rules: { [kind]: source },
          });
        } catch (err) {
          if (err instanceof ApiError) {
            const pos = err.body.details?.position;
            found[kind] = { message: err.body.message, position: typeof pos === 'number' ? pos : null };
          } else found[kind] = { message: String(err), position: null };
        }
      }
      setProblems(found);
      props.onProblems(found);
      setChecking(false);
    }, 250);
    return () => window.clearTimeout(timer.current);
  }, [JSON.stringify(props.rules), JSON.stringify(props.fields), name]);

  const insert = (kind: RuleKind, text: string, el: HTMLTextAreaElement | null) => {
    const cur = props.rules[kind] ?? '';
    const at = el?.selectionStart ?? cur.length;
    props.onChange({ ...props.rules, [kind]: cur.slice(0, at) + text + cur.slice(el?.selectionEnd ?? at) });
    el?.focus();
  };

  return (
    <fieldset class="rules">
      <legend>Rules {checking ? <small>(checking…)</small> : <small>(checked by the API as you type; an empty rule refuses)</small>}</legend>
      {RULE_KINDS.map((kind) => {
        const problem = problems[kind];
        const source = props.rules[kind] ?? '';
        let area: HTMLTextAreaElement | null = null;
        return (
          <div class="rule" key={kind}>
            <label>
              {kind} rule
              <textarea
                ref={(el) => {
                  area = el;
                }}
                name={`rule-${kind}`}
                rows={2}
                spellcheck={false}
                aria-invalid={problem ? 'true' : 'false'}
                aria-describedby={problem ? `rule-${kind}-error` : undefined}
                value={source}
                onInput={(e) => props.onChange({ ...props.rules, [kind]: (e.currentTarget as HTMLTextAreaElement).value })}
              />
            </label>
            <div class="completions" role="group" aria-label={`Insert into the ${kind} rule`}>
              {completions(kind, fieldNames).map((c) => (
                <button type="button" key={c} class="chip" onClick={() => insert(kind, c, area)}>
                  {c}
                </button>
              ))}
            </div>
            {problem && (
              <div class="rule-error" id={`rule-${kind}-error`} role="alert" data-position={problem.position ?? ''}>
                {problem.position !== null && (
                  <pre class="mark" aria-label={`Error at position ${problem.position}`}>
                    {source.slice(0, problem.position)}
                    <mark>{source.slice(problem.position, problem.position + 1) || ' '}</mark>
                    {source.slice(problem.position + 1)}
                  </pre>
                )}
                <p class="error">{problem.message}</p>
              </div>
            )}
          </div>
        );
      })}
    </fieldset>
  );
}
