import { useEffect, useRef, useState } from 'preact/hooks';
import { call, projectPath } from '../api';
import { useProjectKey } from '../project-key';
import { useSubjects } from '../subjects';
import { ErrorBox } from '../ui';

interface Line {
  n: number;
  text: string;
}

/**
 * Live: subscribes to a collection over the realtime WebSocket (`?key=` takes a public key only)
 * as a chosen user (a token minted with `POST /auth/tokens`) or anonymously, and lists what arrives.
 */
export function Live({ project }: { project: string }) {
  const { key, error: keyError } = useProjectKey(project);
  const [publicKey, setPublicKey] = useState('');
  const [who, setWho] = useState('anonymous');
  const [lines, setLines] = useState<Line[]>([]);
  const [state, setState] = useState<'closed' | 'connecting' | 'open'>('closed');
  const [error, setError] = useState<unknown>(null);
  const { collections, users, collection, setCollection } = useSubjects(key, project, setError);
  const ws = useRef<WebSocket | null>(null);
  const count = useRef(0);

  useEffect(() => () => ws.current?.close(), []);
  if (!key) return <ErrorBox error={keyError} />;

  const log = (text: string) => setLines((l) => [{ n: ++count.current, text }, ...l].slice(0, 200));

  const connect = async (e: Event) => {
    e.preventDefault();
    setError(null);
    ws.current?.close();
    let token: string | null = null;
    try {
      if (who !== 'anonymous') {
        const claims = users.find((u) => u.id === who)?.claims ?? {};
        const body = Object.keys(claims).length ? { user_id: who, claims } : { user_id: who };
        token = (await call<{ access_token: string }>(key, 'POST', projectPath(project, '/auth/tokens'), body)).access_token;
      }
    } catch (err) {
      setError(err);
      return;
    }
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const socket = new WebSocket(`${scheme}://${location.host}${projectPath(project, `/realtime?key=${encodeURIComponent(publicKey)}`)}`);
    ws.current = socket;
    setState('connecting');
    socket.onopen = () => {
      setState('open');
      if (token) socket.send(JSON.stringify({ type: 'auth', token }));
      socket.send(JSON.stringify({ type: 'subscribe', id: 'live', collection, snapshot: true }));
    };
    socket.onmessage = (m) => {
      const msg = JSON.parse(String(m.data)) as { type: string; events?: { kind: string; seq: number; record: { id: string } }[] };
      if (msg.type === 'events') for (const ev of msg.events ?? []) log(`${ev.kind} ${ev.record.id} (seq ${ev.seq}): ${JSON.stringify(ev.record)}`);
      else log(`${msg.type}: ${JSON.stringify(msg)}`);
    };
    socket.onclose = (ev) => {
      setState('closed');
      log(`closed (${ev.code}${ev.reason ? `: ${ev.reason}` : ''})`);
    };
  };

  return (
    <section aria-labelledby="live-h">
      <h1 id="live-h">Live</h1>
      <form class="panel" onSubmit={connect} aria-label="Subscribe">
        <div class="row">
          <label>
            Public key (pk_…; the WebSocket takes only a public key)
            <input name="live-key" type="password" autoComplete="off" required value={publicKey} onInput={(e) => setPublicKey((e.currentTarget as HTMLInputElement).value)} />
          </label>
          <label>
            Collection
            <select name="live-collection" value={collection} onChange={(e) => setCollection((e.currentTarget as HTMLSelectElement).value)}>
              {collections.map((c) => (
                <option key={c.name}>{c.name}</option>
              ))}
            </select>
          </label>
          <label>
            As user
            <select name="live-user" value={who} onChange={(e) => setWho((e.currentTarget as HTMLSelectElement).value)}>
              <option value="anonymous">anonymous</option>
              {users.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.email}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={!collection}>
            Subscribe
          </button>
          <button type="button" disabled={state === 'closed'} onClick={() => ws.current?.close()}>
            Disconnect
          </button>
          <span role="status">{state}</span>
        </div>
      </form>
      <ErrorBox error={error} />
      <ol class="list live" aria-label="Messages, newest first" aria-live="polite">
        {lines.map((l) => (
          <li key={l.n}>
            <code>{l.text}</code>
          </li>
        ))}
      </ol>
    </section>
  );
}
