/** `plinth doctor`: is the server there, are the keys valid, are the settings sane. */
import type { CliIo, Connection } from '../client';

type Level = 'ok' | 'warn' | 'FAIL';

const LOCAL_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/**
 * Mail links (verification, reset, magic links) start with the server's PLINTH_PUBLIC_URL: it must
 * answer, here, as this Plinth — a link to a wrong port or host is a mail nobody can use.
 */
async function checkPublicUrl(conn: Connection, admin: string, report: (level: Level, text: string) => void): Promise<void> {
  const r = await conn.call('GET', '/v1/admin/server', { key: admin });
  if (r.status !== 200) return report('warn', `the server does not say its public address (${r.status}): mail links not checked`);
  const publicUrl = (r.body as { public_url?: string | null }).public_url;
  if (!publicUrl) return report('warn', 'PLINTH_PUBLIC_URL is not set on the gateway: mail links not checked');
  let answered: string;
  try {
    const health = await fetch(new URL('/healthz', publicUrl), { signal: AbortSignal.timeout(3000), redirect: 'manual' });
    const body = (await health.json().catch(() => null)) as { service?: string } | null;
    answered = health.status === 200 && body?.service === 'gateway' ? '' : `answers ${health.status}, not as a Plinth gateway`;
  } catch (err) {
    answered = `does not answer (${err instanceof Error ? err.message : String(err)})`;
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
    const health = await conn.call('GET', '/healthz').catch((e: Error) => e);
    if (health instanceof Error) {
      report('FAIL', health.message);
      io.out.write('the other checks need the server\n');
      return 1;
    }
    report(health.status === 200 ? 'ok' : 'FAIL', `server ${conn.url} answers /healthz (${health.status})`);
    const ready = await conn.call('GET', '/readyz');
    report(ready.status === 200 ? 'ok' : 'FAIL', `/readyz: ${ready.status === 200 ? 'every store is reachable' : `${ready.status} ${ready.text.slice(0, 200)}`}`);
  }
  if (!url) return 1;

  const admin = conn.adminKey();
  if (!admin) report('warn', 'no operator key given (--admin-key, PLINTH_ADMIN_KEY): operator checks skipped');
  else if (!admin.startsWith('adm_')) report('FAIL', 'the operator key does not start with adm_');
  else {
    const r = await conn.call('GET', '/v1/admin/projects', { key: admin });
    if (r.status !== 200) report('FAIL', `the operator key is refused (${r.status})`);
    else {
      report('ok', 'the operator key is valid');
      const ids = ((r.body as { projects?: Array<{ id: string }> }).projects ?? []).map((p) => p.id);
      report(ids.includes(conn.project) ? 'ok' : 'FAIL', `project "${conn.project}" ${ids.includes(conn.project) ? 'exists' : 'does not exist'}`);
      await checkPublicUrl(conn, admin, report);
    }
  }

  const secret = conn.secretKey();
  if (!secret) report('warn', `no secret key given for "${conn.project}" (--secret-key, PLINTH_SECRET_KEY): project checks skipped`);
  else {
    // The Auth settings answer only to a secret key of this project: 200 proves both.
    const r = await conn.call('GET', conn.projectPath('/settings/auth'), { key: secret });
    if (r.status === 403) report('FAIL', `the secret key is a public key of "${conn.project}"`);
    else if (r.status !== 200) report('FAIL', `the secret key is refused for project "${conn.project}" (${r.status})`);
    else {
      report('ok', `the secret key is valid for project "${conn.project}"`);
      const s = r.body as { enabled?: boolean; redirect_url?: string | null; mail_from?: string | null };
      report('ok', `Auth is ${s.enabled ? 'enabled' : 'disabled (enable it with PATCH /settings/auth {"enabled":true})'}`);
      if (s.enabled && !s.redirect_url) report('warn', 'Auth settings: redirect_url is not set, so links in mails lead to the gateway itself');
      if (s.enabled && !s.mail_from) report('warn', 'Auth settings: mail_from is not set, mails go out from the default sender');
      const c = await conn.call('GET', conn.projectPath('/collections'), { key: secret });
      const n = ((c.body as { collections?: unknown[] }).collections ?? []).length;
      report(c.status === 200 ? 'ok' : 'FAIL', c.status === 200 ? `${n} collection(s)` : `listing collections: ${c.status}`);
    }
  }
  io.out.write(failed ? 'some checks failed\n' : 'all checks passed\n');
  return failed ? 1 : 0;
}
