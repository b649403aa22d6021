import { useEffect, useState } from 'preact/hooks';
import { call, projectPath, type User } from '../api';
import { useProjectKey } from '../project-key';
import { Confirm, Empty, ErrorBox, JsonView, parseJsonInput } from '../ui';
import { AuthProviders, UserIdentities } from './auth-providers';
import { AuthSettings } from './auth-settings';
import { UserFactors } from './user-factors';

/** How a user is named on this screen: the e-mail, or "anonymous usr_…" for an anonymous user (no address). */
function userLabel(u: User): string {
  return u.email ?? `anonymous ${u.id}`;
}

/** Users (when Auth is enabled): search, view, create, disable/enable, revoke, reset, claims, delete. */
export function Users({ project }: { project: string }) {
  const { key, error: keyError } = useProjectKey(project);
  const [search, setSearch] = useState('');
  const [users, setUsers] = useState<User[] | null>(null);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [noPassword, setNoPassword] = useState(false);
  const [selected, setSelected] = useState<User | null>(null);
  const [reload, setReload] = useState(0);
  const base = projectPath(project, '/auth/users');

  useEffect(() => {
    if (!key) return;
    call<{ users: User[]; total: number }>(key, 'GET', `${base}?${new URLSearchParams({ search, limit: '50' }).toString()}`).then(
      (r) => {
        setUsers(r.users);
        setTotal(r.total);
        setError(null);
      },
      (err: unknown) => {
        setUsers(null);
        setError(err);
      },
    );
  }, [key, search, reload]);
  if (!key) return <ErrorBox error={keyError} />;

  const act = async (what: string, fn: () => Promise<unknown>) => {
    setError(null);
    setNotice('');
    try {
      await fn();
      setNotice(what);
      setReload((n) => n + 1);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section aria-labelledby="users-h">
      <h1 id="users-h">Users</h1>
      <AuthSettings project={project} secret={key} onSaved={() => setReload((n) => n + 1)} />
      <AuthProviders project={project} secret={key} />
      <div class="row">
        <label>
          Search by e-mail
          <input type="search" name="user-search" value={search} onInput={(e) => setSearch((e.currentTarget as HTMLInputElement).value)} />
        </label>
      </div>
      <form
        class="row"
        aria-label="Create a user"
        onSubmit={(e) => {
          e.preventDefault();
          // An empty password is refused unless "No password" says so: a user created without
          // one signs in only by code, link or provider, which must be a choice, not a slip.
          if (!noPassword && password === '') {
            setNotice('');
            setError(new Error('Type a password for the new user, or tick "No password".'));
            return;
          }
          const body = noPassword ? { email } : { email, password };
          // The password leaves the form with this request, whatever the answer: it is never
          // carried over to the next user.
          setPassword('');
          void act(`User ${email} created.`, async () => {
            await call(key, 'POST', base, body);
            setEmail('');
            setNoPassword(false);
          });
        }}
      >
        <label>
          E-mail
          <input type="email" name="new-user-email" required value={email} onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <label>
          Password
          <input
            type="password"
            name="new-user-password"
            autoComplete="new-password"
            disabled={noPassword}
            value={password}
            onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <label class="check">
          <input
            type="checkbox"
            name="new-user-no-password"
            checked={noPassword}
            onChange={(e) => {
              const on = (e.currentTarget as HTMLInputElement).checked;
              setNoPassword(on);
              if (on) setPassword('');
            }}
          />
          No password (signs in by code, link or provider)
        </label>
        <button type="submit">Create user</button>
      </form>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <ErrorBox error={error} />
      {users && users.length === 0 && <Empty>No users{search ? ' match' : ' yet'}.</Empty>}
      {users && users.length > 0 && (
        <div class="scroll">
          <p>{total} user(s)</p>
          <table>
            <thead>
              <tr>
                <th>E-mail</th>
                <th>Status</th>
                <th>Verified</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {users.map((u) => (
                <tr key={u.id}>
                  <td>{u.email ?? <em>anonymous</em>}</td>
                  <td>{u.status}</td>
                  <td>{u.email_verified ? 'yes' : 'no'}</td>
                  <td class="actions">
                    <button type="button" aria-label={`View ${userLabel(u)}`} onClick={() => setSelected(u)}>
                      View
                    </button>
                    <button
                      type="button"
                      aria-label={`${u.status === 'active' ? 'Disable' : 'Enable'} ${userLabel(u)}`}
                      onClick={() =>
                        void act(`${userLabel(u)} ${u.status === 'active' ? 'disabled' : 'enabled'}.`, () =>
                          call(key, 'PATCH', `${base}/${u.id}`, { status: u.status === 'active' ? 'disabled' : 'active' }),
                        )
                      }
                    >
                      {u.status === 'active' ? 'Disable' : 'Enable'}
                    </button>
                    <button type="button" aria-label={`Revoke sessions of ${userLabel(u)}`} onClick={() => void act(`Sessions of ${userLabel(u)} revoked.`, () => call(key, 'POST', `${base}/${u.id}/revoke-sessions`))}>
                      Revoke sessions
                    </button>
                    {u.email !== null && <button type="button" aria-label={`Send a reset to ${userLabel(u)}`} onClick={() => void act(`Reset mail sent to ${userLabel(u)}.`, () => call(key, 'POST', `${base}/${u.id}/send-reset`))}>
                      Send reset
                    </button>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {selected && (
        <UserPanel
          key={selected.id}
          user={selected}
          secret={key}
          userPath={`${base}/${selected.id}`}
          identities={<UserIdentities project={project} secret={key} userId={selected.id} />}
          onClaims={(claims) => act(`Claims of ${userLabel(selected)} saved.`, () => call(key, 'PATCH', `${base}/${selected.id}`, { claims }))}
          onDelete={() =>
            act(`${userLabel(selected)} deleted.`, async () => {
              await call(key, 'DELETE', `${base}/${selected.id}`);
              setSelected(null);
            })
          }
          onClose={() => setSelected(null)}
        />
      )}
    </section>
  );
}

function UserPanel(props: { user: User; secret: string; userPath: string; identities: preact.ComponentChildren; onClaims: (c: unknown) => Promise<void>; onDelete: () => Promise<void>; onClose: () => void }) {
  const [claims, setClaims] = useState(JSON.stringify(props.user.claims ?? {}, null, 2));
  const [error, setError] = useState<unknown>(null);
  const [confirming, setConfirming] = useState(false);
  return (
    <div class="panel" role="region" aria-label={`User ${userLabel(props.user)}`}>
      <h2>{userLabel(props.user)}</h2>
      <JsonView value={props.user} />
      <UserFactors secret={props.secret} userPath={props.userPath} label={userLabel(props.user)} />
      {props.identities}
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            setError(null);
            await props.onClaims(parseJsonInput(claims, 'Claims') ?? {});
          } catch (err) {
            setError(err);
          }
        }}
      >
        <label>
          Custom claims (auth.claims.*), JSON
          <textarea name="claims" rows={4} value={claims} onInput={(e) => setClaims((e.currentTarget as HTMLTextAreaElement).value)} />
        </label>
        <button type="submit">Save claims</button>
      </form>
      <ErrorBox error={error} />
      <div class="row">
        <button type="button" class="danger" onClick={() => setConfirming(true)}>
          Delete user
        </button>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
      {confirming && <Confirm word={props.user.email ?? props.user.id} what={`Delete user ${userLabel(props.user)}`} onCancel={() => setConfirming(false)} onConfirm={() => void props.onDelete()} />}
    </div>
  );
}
