import { useEffect, useState } from 'preact/hooks';
import { call } from '../api';
import { ErrorBox } from '../ui';

/** A second factor as the admin API lists it (never its secret). */
interface Factor {
  type: 'totp';
  status: 'pending' | 'active';
  created_at: string;
  confirmed_at: string | null;
  recovery_codes_left: number;
}

/**
 * A user's second factors (two-factor sign-in, docs/auth.md section 16) and the operator's reset,
 * for a lost authenticator: the user then signs in with the password alone and may enroll again.
 */
export function UserFactors(props: { secret: string; userPath: string; label: string }) {
  const [factors, setFactors] = useState<Factor[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [reload, setReload] = useState(0);

  useEffect(() => {
    call<{ factors: Factor[] }>(props.secret, 'GET', `${props.userPath}/mfa`).then(
      (r) => {
        setFactors(r.factors);
        setError(null);
      },
      (err: unknown) => setError(err),
    );
  }, [props.secret, props.userPath, reload]);

  const reset = async () => {
    setNotice('');
    try {
      await call(props.secret, 'DELETE', `${props.userPath}/mfa`);
      setNotice(`Two-factor sign-in of ${props.label} reset.`);
      setReload((n) => n + 1);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <div role="group" aria-label="Second factors">
      <h3>Second factors</h3>
      {factors && factors.length === 0 && <p>No second factor: this user signs in with one factor.</p>}
      {factors && factors.length > 0 && (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th>Type</th>
                <th>Status</th>
                <th>Since</th>
                <th>Recovery codes left</th>
              </tr>
            </thead>
            <tbody>
              {factors.map((f) => (
                <tr key={f.type}>
                  <td>{f.type === 'totp' ? 'Authenticator app (TOTP)' : f.type}</td>
                  <td>{f.status}</td>
                  <td>{f.confirmed_at ?? f.created_at}</td>
                  <td>{f.recovery_codes_left}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {factors && factors.length > 0 && (
        <button type="button" class="danger" aria-label={`Reset two-factor sign-in of ${props.label}`} onClick={() => void reset()}>
          Reset two-factor sign-in
        </button>
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <ErrorBox error={error} />
    </div>
  );
}
