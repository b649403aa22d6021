import { useEffect, useState } from 'preact/hooks';
import { call, projectPath } from '../api';
import { useProjectKey } from '../project-key';
import { Empty, ErrorBox } from '../ui';

interface DeadLetter {
  id: string;
  kind: string;
  to: string;
  attempts: number;
  error: string;
  failed_at: string;
}
interface Message {
  id: string;
  to: string;
  subject: string;
  text: string;
  kind: string;
  created_at: string;
}

/** Mail: dead letters with retry; the dev mailbox (standalone without SMTP). */
export function Mail({ project }: { project: string }) {
  const { key, error: keyError } = useProjectKey(project);
  const [failed, setFailed] = useState<DeadLetter[] | null>(null);
  const [box, setBox] = useState<Message[] | null>(null);
  const [boxError, setBoxError] = useState<unknown>(null);
  const [error, setError] = useState<unknown>(null);
  const [to, setTo] = useState('');
  const [reload, setReload] = useState(0);
  useEffect(() => {
    if (!key) return;
    call<{ jobs: DeadLetter[] }>(key, 'GET', projectPath(project, '/mail/failed')).then((r) => setFailed(r.jobs), setError);
    call<{ messages: Message[] }>(key, 'GET', projectPath(project, `/mailbox?${new URLSearchParams({ to, limit: '50' }).toString()}`)).then(
      (r) => {
        setBox(r.messages);
        setBoxError(null);
      },
      setBoxError,
    );
  }, [key, to, reload]);
  if (!key) return <ErrorBox error={keyError} />;
  return (
    <section aria-labelledby="mail-h">
      <h1 id="mail-h">Mail</h1>
      <h2>Dead letters</h2>
      <ErrorBox error={error} />
      {failed && failed.length === 0 && <Empty>No failed mail.</Empty>}
      {failed && failed.length > 0 && (
        <ul class="list">
          {failed.map((j) => (
            <li key={j.id}>
              {j.kind} to {j.to}: {j.error} ({j.attempts} attempts, {j.failed_at}){' '}
              <button
                type="button"
                aria-label={`Retry mail ${j.id}`}
                onClick={async () => {
                  try {
                    await call(key, 'POST', projectPath(project, `/mail/failed/${encodeURIComponent(j.id)}/retry`));
                    setReload((n) => n + 1);
                  } catch (err) {
                    setError(err);
                  }
                }}
              >
                Retry
              </button>
            </li>
          ))}
        </ul>
      )}
      <h2>Dev mailbox</h2>
      <label>
        To (filter)
        <input type="search" name="mailbox-to" value={to} onInput={(e) => setTo((e.currentTarget as HTMLInputElement).value)} />
      </label>
      <ErrorBox error={boxError} />
      {box && box.length === 0 && <Empty>The mailbox is empty.</Empty>}
      {box && box.length > 0 && (
        <ul class="list">
          {box.map((m) => (
            <li key={m.id}>
              <details>
                <summary>
                  {m.created_at} · {m.kind} · {m.to} · {m.subject}
                </summary>
                <pre>{m.text}</pre>
              </details>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
