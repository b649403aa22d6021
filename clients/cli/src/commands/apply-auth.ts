/**
 * The `auth` section of a schema file (docs/cli.md "Schema as code"): the project's Auth settings
 * — `enabled`, token lifetimes, `redirect_urls`, sign-in `providers`… — as `PATCH …/settings/auth`
 * takes them. A provider's `client_secret` is never written in the file: `{"env": "NAME"}` names
 * the environment variable `apply` reads it from.
 *
 * Planned against the live settings: a setting whose value differs is changed; a provider missing
 * from the project is added (its secret read from the environment), one whose settings differ is
 * changed (with its secret when the variable is set, else the stored one is kept), one set to
 * `null` is removed; providers and settings the file does not name are left as they are. The
 * patch is checked with `?dry_run=true` before anything changes.
 */
import { PlinthError, type AdminClient } from '@plinth/client/admin';
import { UsageError } from '../client';

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
const isObject = (v: unknown): v is { [k: string]: unknown } => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A provider in the file: its settings, the secret as an environment variable's name. */
export interface ProviderSpec {
  [setting: string]: Json | { env: string } | undefined;
  client_secret?: { env: string };
}
export interface AuthSpec {
  settings: { [name: string]: Json };
  providers: { [name: string]: ProviderSpec | null };
}

/** The file's `auth` section, checked for shape; secrets only as `{"env": "NAME"}`. */
export function parseAuthSpec(raw: unknown, file: string): AuthSpec {
  if (!isObject(raw)) throw new UsageError(`${file}: "auth" must be an object of Auth settings`);
  const { providers = {}, ...settings } = raw;
  if (!isObject(providers)) throw new UsageError(`${file}: auth.providers must map provider names to settings (or null)`);
  const out: AuthSpec = { settings: settings as AuthSpec['settings'], providers: {} };
  for (const [name, p] of Object.entries(providers)) {
    if (p === null) {
      out.providers[name] = null;
      continue;
    }
    if (!isObject(p)) throw new UsageError(`${file}: auth.providers.${name} must be an object or null`);
    const secret = p.client_secret;
    if (secret !== undefined && !(isObject(secret) && typeof secret.env === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(secret.env))) {
      throw new UsageError(`${file}: auth.providers.${name}.client_secret must be {"env": "VARIABLE"}: a schema file holds no secret, apply reads it from the environment`);
    }
    out.providers[name] = p as ProviderSpec;
  }
  return out;
}

interface LiveSettings {
  [name: string]: unknown;
  providers: { [name: string]: { [setting: string]: unknown } };
}

/** What apply does to the Auth settings: the plan's line, the PATCH body, and what keeps it from being applied. */
export interface AuthPlan {
  line?: string;
  body?: { [name: string]: unknown };
  problems: string[];
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** The provider's settings as the file gives them, without the secret, with the server's default `enabled`. */
function withoutSecret(p: ProviderSpec): { [setting: string]: unknown } {
  const { client_secret: _secret, ...rest } = p;
  return { enabled: true, ...rest };
}

/** The live settings, as the settings API answers them (providers without their secrets). */
async function liveSettings(admin: AdminClient): Promise<LiveSettings> {
  return (await admin.authSettings.get()) as unknown as LiveSettings;
}

export async function planAuth(admin: AdminClient, spec: AuthSpec, env: NodeJS.ProcessEnv): Promise<AuthPlan> {
  const live = await liveSettings(admin);
  const notes: string[] = [];
  const problems: string[] = [];
  const body: { [name: string]: unknown } = {};
  for (const [name, value] of Object.entries(spec.settings)) {
    if (same(live[name], value)) continue;
    body[name] = value;
    notes.push(`~ ${name} ${JSON.stringify(live[name] ?? null)} → ${JSON.stringify(value)}`);
  }
  const providers: { [name: string]: unknown } = {};
  for (const [name, p] of Object.entries(spec.providers)) {
    const current = live.providers[name];
    if (p === null) {
      if (current) {
        providers[name] = null;
        notes.push(`- provider ${name}`);
      }
      continue;
    }
    const wanted = withoutSecret(p);
    const { client_secret_set: hasSecret, ...shown } = current ?? {};
    if (current && Object.keys({ ...wanted, ...shown }).every((k) => same(wanted[k], shown[k]))) continue;
    const variable = p.client_secret?.env;
    const secret = variable ? env[variable] : undefined;
    if (!secret && !(current && hasSecret)) {
      problems.push(`auth.providers.${name}: its client secret is needed${variable ? `: set ${variable} in the environment` : ': give "client_secret": {"env": "VARIABLE"}'}`);
    }
    providers[name] = { ...wanted, ...(secret ? { client_secret: secret } : {}) };
    notes.push(`${current ? '~' : '+'} provider ${name}${secret ? ' (secret from the environment)' : ''}`);
  }
  if (Object.keys(providers).length) body.providers = providers;
  if (notes.length === 0) return { problems };
  // The server's own checks, nothing stored: what the real PATCH would answer.
  try {
    await admin.authSettings.update(body, { dryRun: true });
  } catch (e) {
    if (!(e instanceof PlinthError) || e.status === 0) throw e;
    problems.push(`auth: ${e.status} ${e.code}: ${e.message}${e.details ? ` ${JSON.stringify(e.details)}` : ''}`);
  }
  return { line: `~ update Auth settings: ${notes.join(', ')}`, body, problems };
}

/** The live Auth settings as a file's `auth` section (`plinth pull --auth`): secrets as variables to set. */
export async function pullAuth(admin: AdminClient): Promise<{ [name: string]: unknown }> {
  const { providers, ...settings } = await liveSettings(admin);
  const out: { [name: string]: unknown } = {};
  for (const [name, p] of Object.entries(providers)) {
    const { client_secret_set: _set, ...rest } = p;
    out[name] = { ...rest, client_secret: { env: `PLINTH_${name.toUpperCase().replaceAll('-', '_')}_CLIENT_SECRET` } };
  }
  return { ...settings, providers: out };
}
