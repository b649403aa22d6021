import type { Webhook, WebhookDelivery } from '@plinth/protocol';
import { useEffect, useState } from 'preact/hooks';
import { call, projectPath } from '../api';
import { useProjectKey } from '../project-key';
import { Empty, ErrorBox } from '../ui';

type Delivery = WebhookDelivery;

/** One webhook's recent deliveries, dead letters first, each dead one with Replay. */
function Deliveries({ project, hook, keyValue }: { project: string; hook: Webhook; keyValue: string }) {
  const [list, setList] = useState<Delivery[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [reload, setReload] = useState(0);
  const base = `/webhooks/${encodeURIComponent(hook.id)}/deliveries`;
  useEffect(() => {
    call<{ deliveries: Delivery[] }>(keyValue, 'GET', projectPath(project, `${base}?limit=50`)).then((r) => setList(r.deliveries), setError);
  }, [keyValue, hook.id, reload]);
  const dead = list?.filter((d) => d.status === 'dead') ?? [];
  const rest = list?.filter((d) => d.status !== 'dead') ?? [];
  return (
    <div>
      <ErrorBox error={error} />
      <h3>Dead letters</h3>
      {list && dead.length === 0 && <Empty>No dead letters.</Empty>}
      {dead.length > 0 && (
        <ul class="list" aria-label={`Dead letters of ${hook.url}`}>
          {dead.map((d) => (
            <li key={d.id}>
              {d.event_type} {d.event_id}: {d.last_error ?? `status ${d.last_status}`} ({d.attempts} attempts, {d.updated_at}){' '}
              <button
                type="button"
                aria-label={`Replay delivery ${d.id}`}
                onClick={async () => {
                  try {
                    await call(keyValue, 'POST', projectPath(project, `${base}/${encodeURIComponent(d.id)}/replay`));
                    setReload((n) => n + 1);
                  } catch (err) {
                    setError(err);
                  }
                }}
              >
                Replay
              </button>
            </li>
          ))}
        </ul>
      )}
      <h3>Recent deliveries</h3>
      {list && rest.length === 0 && <Empty>No deliveries yet.</Empty>}
      {rest.length > 0 && (
        <ul class="list" aria-label={`Deliveries of ${hook.url}`}>
          {rest.map((d) => (
            <li key={d.id}>
              {d.status} · {d.event_type} · {d.event_id} · {d.attempts} attempts{d.last_status !== null ? ` · ${d.last_status}` : ''}
              {d.last_error ? ` · ${d.last_error}` : ''}
            </li>
          ))}
        </ul>
      )}
      <button type="button" onClick={() => setReload((n) => n + 1)}>
        Refresh
      </button>
    </div>
  );
}

/** Webhooks: each webhook with its deliveries and dead letters (Replay); docs/webhooks.md. */
export function Webhooks({ project }: { project: string }) {
  const { key, error: keyError } = useProjectKey(project);
  const [hooks, setHooks] = useState<Webhook[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (!key) return;
    call<{ webhooks: Webhook[] }>(key, 'GET', projectPath(project, '/webhooks')).then((r) => setHooks(r.webhooks), setError);
  }, [key]);
  if (!key) return <ErrorBox error={keyError} />;
  return (
    <section aria-labelledby="webhooks-h">
      <h1 id="webhooks-h">Webhooks</h1>
      <ErrorBox error={error} />
      {hooks && hooks.length === 0 && <Empty>No webhooks. Register one with POST /v1/projects/{project}/webhooks (docs/webhooks.md).</Empty>}
      {hooks?.map((h) => (
        <details key={h.id} open={hooks.length === 1}>
          <summary>
            {h.url} · {h.events.join(', ')}
            {h.collections ? ` · ${h.collections.join(', ')}` : ''} · {h.enabled ? 'enabled' : `disabled (${h.disabled_reason ?? 'by hand'})`}
          </summary>
          <Deliveries project={project} hook={h} keyValue={key} />
        </details>
      ))}
    </section>
  );
}
