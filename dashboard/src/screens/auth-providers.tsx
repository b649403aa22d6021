import type { AuthProviderView, AuthSettings } from '@plinth/protocol';
import { useEffect, useState } from 'preact/hooks';
import { call, projectPath } from '../api';
import { ErrorBox } from '../ui';

/** The providers as the settings API shows them (each secret is write-only: only whether one is set). */
type ProviderSettings = Pick<AuthSettings<AuthProviderView>, 'providers' | 'redirect_urls'>;

const input = (e: Event): string => (e.currentTarget as HTMLInputElement).value;

/**
 * Sign-in providers (docs/auth.md "Sign-in with a provider"): the list, a form that adds or
 * updates one (the secret field is write-only: left empty, the stored secret is kept), and the
 * redirect allow-list.
 */
export function AuthProviders(props: { project: string; secret: string }) {
  const path = projectPath(props.project, '/settings/auth');
  const [s, setS] = useState<ProviderSettings | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [form, setForm] = useState({ name: '', client_id: '', client_secret: '', issuer: '', tenant: '', enabled: true });
  const [urls, setUrls] = useState('');
  useEffect(() => {
    call<ProviderSettings>(props.secret, 'GET', path).then((r) => {
      setS(r);
      setUrls(r.redirect_urls.join('\n'));
    }, setError);
  }, [props.project]);
  if (!s) return <ErrorBox error={error} />;

  const save = async (body: object, what: string) => {
    setError(null);
    setNotice('');
    try {
      const r = await call<ProviderSettings>(props.secret, 'PATCH', path, body);
      setS(r);
      setNotice(what);
    } catch (err) {
      setError(err);
    }
  };
  const existing = s.providers[form.name];
  return (
    <section class="panel" aria-labelledby="auth-providers-h">
      <h2 id="auth-providers-h">Sign-in providers</h2>
      <div class="scroll">
        <table aria-label="Sign-in providers">
          <thead>
            <tr><th>name</th><th>client id</th><th>issuer</th><th>secret</th><th>enabled</th><th /></tr>
          </thead>
          <tbody>
            {Object.entries(s.providers).map(([name, p]) => (
              <tr key={name}>
                <td>{name}</td>
                <td>{p.client_id}</td>
                <td>{p.issuer ?? p.github_url ?? '(preset)'}</td>
                <td>{p.client_secret_set ? 'set' : 'missing'}</td>
                <td>{p.enabled ? 'yes' : 'no'}</td>
                <td>
                  <button type="button" onClick={() => setForm({ name, client_id: p.client_id, client_secret: '', issuer: p.issuer ?? '', tenant: p.tenant ?? '', enabled: p.enabled })}>Edit</button>
                  <button type="button" class="danger" onClick={() => void save({ providers: { [name]: null } }, `Provider ${name} removed.`)}>Remove</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <form
        aria-label="Provider"
        onSubmit={(e) => {
          e.preventDefault();
          const entry = {
            enabled: form.enabled,
            client_id: form.client_id,
            ...(form.client_secret ? { client_secret: form.client_secret } : {}),
            ...(form.issuer ? { issuer: form.issuer } : {}),
            ...(form.tenant ? { tenant: form.tenant } : {}),
          };
          void save({ providers: { [form.name]: entry } }, `Provider ${form.name} saved.`).then(() => setForm({ ...form, client_secret: '' }));
        }}
      >
        <div class="row">
          <label>name (google, microsoft, apple, github, or your own)<input name="provider_name" value={form.name} onInput={(e) => setForm({ ...form, name: input(e) })} /></label>
          <label>client id<input name="client_id" value={form.client_id} onInput={(e) => setForm({ ...form, client_id: input(e) })} /></label>
          <label>
            client secret (write-only)
            <input name="client_secret" type="password" autocomplete="off" placeholder={existing?.client_secret_set ? 'set — leave empty to keep' : ''} value={form.client_secret} onInput={(e) => setForm({ ...form, client_secret: input(e) })} />
          </label>
          <label>issuer URL (your own provider)<input name="issuer" value={form.issuer} onInput={(e) => setForm({ ...form, issuer: input(e) })} /></label>
          <label>tenant (microsoft)<input name="tenant" value={form.tenant} onInput={(e) => setForm({ ...form, tenant: input(e) })} /></label>
          <label class="check"><input type="checkbox" name="provider_enabled" checked={form.enabled} onChange={(e) => setForm({ ...form, enabled: (e.currentTarget as HTMLInputElement).checked })} />enabled</label>
        </div>
        <button type="submit">Save provider</button>
      </form>
      <form
        aria-label="Redirect URLs"
        onSubmit={(e) => {
          e.preventDefault();
          void save({ redirect_urls: urls.split('\n').map((u) => u.trim()).filter(Boolean) }, 'Redirect URLs saved.');
        }}
      >
        <label>
          redirect_urls (one per line: where the app may be sent back after a provider sign-in)
          <textarea name="redirect_urls" rows={3} value={urls} onInput={(e) => setUrls((e.currentTarget as HTMLTextAreaElement).value)} />
        </label>
        <button type="submit">Save redirect URLs</button>
      </form>
      {notice && <p role="status">{notice}</p>}
      <ErrorBox error={error} />
    </section>
  );
}

/** A user's linked provider accounts (secret key). */
export function UserIdentities(props: { project: string; secret: string; userId: string }) {
  const [ids, setIds] = useState<Array<{ provider: string; subject: string; email: string | null; email_verified: boolean }> | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    call<{ identities: typeof ids }>(props.secret, 'GET', projectPath(props.project, `/auth/users/${encodeURIComponent(props.userId)}/identities`)).then((r) => setIds(r.identities), setError);
  }, [props.userId]);
  if (!ids) return <ErrorBox error={error} />;
  return (
    <div aria-label="Linked identities" role="region">
      <h3>Linked identities</h3>
      {ids.length === 0 ? (
        <p>None: this user signs in with a password or a code.</p>
      ) : (
        <ul>
          {ids.map((i) => (
            <li key={i.provider}>
              {i.provider}: {i.email ?? '(no address)'} {i.email_verified ? '(verified by the provider)' : '(not verified by the provider)'} — subject {i.subject}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
