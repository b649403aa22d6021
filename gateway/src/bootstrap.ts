import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { asProjectId, assertWritableDir, newSecret } from '@plinth/shared';
import { generateKey } from './keys';
import type { KeyAuthenticator } from './key-authenticator';
import type { ProjectStore } from './store/project-store';

/**
 * What standalone mode keeps in `<data dir>/credentials.json` (mode 0600): the generated
 * operator key, the internal secret (what signs internal calls and file tokens, and what the keys
 * sealing TOTP and webhook secrets derive from, so it must outlive a restart), and the demo
 * project's keys so a restart can print them again.
 */
export interface StoredCredentials {
  admin_key?: string;
  internal_secret?: string;
  demo_created?: boolean;
  demo?: { public: string; secret: string };
}

const FILE = 'credentials.json';
export const DEMO_PROJECT = asProjectId('demo');

export function readCredentials(dataDir: string): StoredCredentials {
  try {
    return JSON.parse(fs.readFileSync(path.join(dataDir, FILE), 'utf8')) as StoredCredentials;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
}

export function writeCredentials(dataDir: string, creds: StoredCredentials): void {
  assertWritableDir(dataDir);
  const file = path.join(dataDir, FILE);
  fs.writeFileSync(file, `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600 });
}

/** The operator key: from the environment, else the one stored in the data dir, else a new one (stored). */
export function resolveAdminKey(dataDir: string, fromEnv: string | undefined): { key: string; source: 'env' | 'stored' | 'generated' } {
  if (fromEnv) return { key: fromEnv, source: 'env' };
  const creds = readCredentials(dataDir);
  if (creds.admin_key) return { key: creds.admin_key, source: 'stored' };
  const key = newSecret('adm_', 32);
  writeCredentials(dataDir, { ...creds, admin_key: key });
  return { key, source: 'generated' };
}

/**
 * The internal secret: from the environment, else the one stored in the data dir, else a new one
 * (stored). A new one at every start would make every sealed TOTP secret and webhook signing
 * secret unreadable after a restart.
 */
export function resolveInternalSecret(dataDir: string, fromEnv: string | undefined): string {
  if (fromEnv) return fromEnv;
  const creds = readCredentials(dataDir);
  if (creds.internal_secret) return creds.internal_secret;
  const secret = randomBytes(32).toString('base64url');
  writeCredentials(dataDir, { ...creds, internal_secret: secret });
  return secret;
}

/**
 * Creates the `demo` project on the very first start (never again, even if an operator deletes
 * it) and returns its keys while they still authenticate.
 */
export async function ensureDemoProject(
  dataDir: string,
  store: ProjectStore,
  keys: KeyAuthenticator,
): Promise<{ public: string; secret: string } | null> {
  const creds = readCredentials(dataDir);
  if (!creds.demo_created) {
    if (!(await store.getProject(DEMO_PROJECT))) {
      const now = new Date();
      const pub = generateKey(DEMO_PROJECT, 'public', now);
      const sec = generateKey(DEMO_PROJECT, 'secret', now);
      await store.createProject({ id: DEMO_PROJECT, name: 'Demo', created_at: now.toISOString() }, [pub.record, sec.record]);
      creds.demo = { public: pub.value, secret: sec.value };
    }
    creds.demo_created = true;
    writeCredentials(dataDir, creds);
  }
  if (!creds.demo) return null;
  const [pub, sec] = await Promise.all([keys.lookup(creds.demo.public), keys.lookup(creds.demo.secret)]);
  return pub?.project === DEMO_PROJECT && sec?.project === DEMO_PROJECT ? creds.demo : null;
}
