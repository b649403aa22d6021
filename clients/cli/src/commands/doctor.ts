/** `plinth doctor`: is the server there, are the keys valid, are the settings sane (every call through `@plinth/client`). */
import { PlinthError } from '@plinth/client/admin';
import { probe } from '@plinth/client/operator';
import { describeError, type CliIo, type Connection } from '../client';

type Level = 'ok' | 'warn' | 'FAIL';

const LOCAL_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

type Attempt<T> = { ok: true; value: T; status: 200 } | { ok: false; status: number; error: PlinthError };

/** A call's value, or the HTTP status it was refused with; a call that got no answer rejects. */
async function attempt<T>(call: Promise<T>): Promise<Attempt<T>> {
  try {
    return { ok: true, value: await call, status: 200 };
  } catch (e) {
    if (!(e instanceof PlinthError) || e.status === 0) throw e;
    return { ok: false, status: e.status, error: e };
  }
}

/**
 * Mail links (verification, reset, magic links) start with the server's PLINTH_PUBLIC_URL: it must
 * answer, here, as this Plinth — a link to a wrong port or host is a mail nobody can use.
 */
async function checkPublicUrl(conn: Connection, admin: string, report: (level: Level, text: string) => void): Promise<void> {
  let publicUrl: string | null;
  try {
    publicUrl = (await conn.operator(admin).server()).public_url;
  } catch (e) {
    if (!(e instanceof PlinthError) || e.status === 0) throw e;
    return report('warn', `the server does not say its public address (${e.status}): mail links not checked`);
  }
  if (!publicUrl) return report('warn', 'PLINTH_PUBLIC_URL is not set on the gateway: mail links not checked');
  let answered: string;
  try {
    // No key goes there, and a redirect is an answer of its own: that address may not be this Plinth.
    const manual: typeof fetch = (input, init) => fetch(input, { ...init, redirect: 'manual' });
    const health = await probe(publicUrl, 'healthz', { signal: AbortSignal.timeout(3000), fetch: manual });
    answered = health.service === 'gateway' ? '' : 'answers 200, not as a Plinth gateway';
  } catch (err) {
    if (err instanceof PlinthError && err.status > 0) answered = `answers ${err.status}, not as a Plinth gateway`;
    else answered = `does not answer (${err instanceof PlinthError ? describeError(err, publicUrl) : err instanceof Error ? err.message : String(err)})`;
  }
  if (answered) {
    return report('FAIL', `mail links point to ${publicUrl}, which ${answered}: set PLINTH_PUBLIC_URL to the address your users reach`);
  }
  report('ok', `mail links point to ${publicUrl}, which answers`);
  const url = new URL(publicUrl);
  if (url.protocol !== 'https:' && !LOCAL_HOSTS.includes(url.hostname)) {
    report('warn', `mail links point to ${publicUrl}, which is not https: links carry one-time tokens in clear`);
  }
}

export async function doctorCommand(_args: string[], conn: Connection, io: CliIo): Promise<number> {
  let failed = false;
  const report = (level: Level, text: string): void => {
    if (level === 'FAIL') failed = true;
    io.out.write(`${level.padEnd(4)}  ${text}\n`);
  };

  let url: URL | null = null;
  try {
    url = new URL(conn.url);
  } catch {
    report('FAIL', `"${conn.url}" is not a URL (set --url, PLINTH_URL or PLINTH)`);
  }
  if (url) {
    const local = LOCAL_HOSTS.includes(url.hostname);
    if (url.protocol !== 'https:' && !local) report('warn', `${conn.url} is not https: keys travel in clear`);
    let health: Attempt<unknown>;
    try {
      health = await attempt(probe(conn.url, 'healthz'));
    } catch (e) {
      report('FAIL', e instanceof PlinthError ? describeError(e, conn.url) : String(e));
      io.out.write('the other checks need the server\n');
      return 1;
    }
    report(health.ok ? 'ok' : 'FAIL', `server ${conn.url} answers /healthz (${health.status})`);
    const ready = await attempt(probe(conn.url, 'readyz'));
    report(ready.ok ? 'ok' : 'FAIL', `/readyz: ${ready.ok ? 'every store is reachable' : `${ready.status} ${ready.error.code}: ${ready.error.message}`}`);
  }
  if (!url) return 1;

  const admin = conn.adminKey();
  if (!admin) report('warn', 'no operator key given (--admin-key, PLINTH_ADMIN_KEY): operator checks skipped');
  else if (!admin.startsWith('adm_')) report('FAIL', 'the operator key does not start with adm_');
  else {
    const listed = await attempt(conn.operator(admin).projects.list());
    if (!listed.ok) report('FAIL', `the operator key is refused (${listed.status})`);
    else {
      const known = listed.value.map((p) => p.id);
      report('ok', 'the operator key is valid');
      report(known.includes(conn.project) ? 'ok' : 'FAIL', `project "${conn.project}" ${known.includes(conn.project) ? 'exists' : 'does not exist'}`);
      await checkPublicUrl(conn, admin, report);
    }
  }

  const secret = conn.secretKey();
  if (!secret) report('warn', `no secret key given for "${conn.project}" (--secret-key, PLINTH_SECRET_KEY): project checks skipped`);
  else {
    // The Auth settings answer only to a secret key of this project: 200 proves both.
    const api = conn.admin(conn.project, secret);
    const r = await attempt(api.authSettings.get());
    if (r.status === 403) report('FAIL', `the secret key is a public key of "${conn.project}"`);
    else if (!r.ok) report('FAIL', `the secret key is refused for project "${conn.project}" (${r.status})`);
    else {
      const s = r.value;
      report('ok', `the secret key is valid for project "${conn.project}"`);
      report('ok', `Auth is ${s.enabled ? 'enabled' : 'disabled (enable it with PATCH /settings/auth {"enabled":true})'}`);
      if (s.enabled && !s.redirect_url) report('warn', 'Auth settings: redirect_url is not set, so links in mails lead to the gateway itself');
      if (s.enabled && !s.mail_from) report('warn', 'Auth settings: mail_from is not set, mails go out from the default sender');
      const c = await attempt(api.collections.list());
      report(c.ok ? 'ok' : 'FAIL', c.ok ? `${c.value.length} collection(s)` : `listing collections: ${c.status}`);
    }
  }
  io.out.write(failed ? 'some checks failed\n' : 'all checks passed\n');
  return failed ? 1 : 0;
}
