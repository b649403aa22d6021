import type { AuthSettings as WireAuthSettings } from '@plinth/protocol';
import { useEffect, useState } from 'preact/hooks';
import { call, projectPath } from '../api';
import { ErrorBox } from '../ui';

/** The settings edited here: all but the providers and their redirect URLs. */
type Settings = Omit<WireAuthSettings, 'providers' | 'redirect_urls'>;
const BOOLS = ['enabled', 'otp_creates_users', 'send_verification_on_signup', 'allow_anonymous'] as const;
const NUMBERS = ['access_token_ttl', 'refresh_token_ttl', 'reauthentication_window'] as const;
const STRINGS = ['redirect_url', 'mail_from'] as const;

/** Every setting of `/settings/auth`. */
export function AuthSettings(props: { project: string; secret: string; onSaved: () => void }) {
  const [s, setS] = useState<Settings | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const path = projectPath(props.project, '/settings/auth');
  useEffect(() => {
    call<Settings>(props.secret, 'GET', path).then(setS, setError);
  }, [props.project]);
  if (!s) return <ErrorBox error={error} />;
  return (
    <section class="panel" aria-labelledby="auth-settings-h">
      <h2 id="auth-settings-h">Auth settings {s.enabled ? '(enabled)' : '(disabled: users cannot sign up or sign in)'}</h2>
      <form
        aria-label="Auth settings"
        onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          setSaved(false);
          try {
            // Providers and redirect URLs are saved by their own panel (auth-providers.tsx): secrets are write-only.
            const { providers: _providers, redirect_urls: _urls, ...rest } = s as Settings & { providers?: unknown; redirect_urls?: unknown };
            setS(await call<Settings>(props.secret, 'PATCH', path, rest));
            setSaved(true);
            props.onSaved();
          } catch (err) {
            setError(err);
          }
        }}
      >
        <div class="row">
          {BOOLS.map((k) => (
            <label class="check" key={k}>
              <input type="checkbox" name={k} checked={s[k]} onChange={(e) => setS({ ...s, [k]: (e.currentTarget as HTMLInputElement).checked })} />
              {k}
            </label>
          ))}
        </div>
        <div class="row">
          {NUMBERS.map((k) => (
            <label key={k}>
              {k} (seconds)
              <input type="number" name={k} value={s[k]} onInput={(e) => setS({ ...s, [k]: Number((e.currentTarget as HTMLInputElement).value) })} />
            </label>
          ))}
          {STRINGS.map((k) => (
            <label key={k}>
              {k}
              <input name={k} value={s[k] ?? ''} onInput={(e) => setS({ ...s, [k]: (e.currentTarget as HTMLInputElement).value || null })} />
            </label>
          ))}
        </div>
        <button type="submit">Save auth settings</button>
        {saved && <span role="status"> Saved.</span>}
        <ErrorBox error={error} />
      </form>
    </section>
  );
}
