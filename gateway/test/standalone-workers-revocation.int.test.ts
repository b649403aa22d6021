/**
 * `npm start` with PLINTH_WORKERS=2: what one worker ends, every worker refuses. Each worker is
 * asked directly (fresh connections alternate between them, X-Plinth-Worker says which answered).
 * - A project deleted and created again with the same id: the old tenant's user and minted
 *   tokens are refused at once, the new tenant's work within a second — no worker keeps the old
 *   tenant's signing keys.
 * - Tokens a backend minted for an Auth user stop working when the user is disabled or deleted.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshRequest, startStandalone, stopStandalone, type StandaloneProcess } from '@plinth/testing/standalone-process';
import { onEveryProcess, readPayroll, setUpTenant, within, type Caller, type TenantKeys } from '../../test/e2e/support/tenant-reuse';

let s: StandaloneProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-reuse-'));
  s = await startStandalone(dataDir, { PLINTH_WORKERS: '2', PLINTH_BCRYPT_COST: '4', PLINTH_RATE_LIMIT_IP: '100000' });
}, 60_000);

afterAll(async () => {
  if (s) await stopStandalone(s);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const PROJECT = 'payroll-co';
const WORKERS = ['1', '2'];

/** Calls the project's API on a fresh connection (so successive calls alternate workers). */
const callerFor =
  (project: string): Caller =>
  async (c) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${c.key}` };
    if (c.dbUserToken) headers['X-Db-User-Token'] = c.dbUserToken;
    if (c.authUserToken) headers['X-Auth-User-Token'] = c.authUserToken;
    const res = await freshRequest(`${s.url}/v1/projects/${project}${c.path}`, { method: c.method, headers, body: c.body });
    return { status: res.status, body: res.body, via: res.worker ?? '?' };
  };
const caller = callerFor(PROJECT);

async function createProjectAs(id: string): Promise<TenantKeys> {
  const res = await freshRequest(`${s.url}/v1/admin/projects`, { method: 'POST', headers: { Authorization: `Bearer ${s.operatorKey}` }, body: { id } });
  expect(res.status).toBe(201);
  const keys = (res.body as { keys: { public: string; secret: string } }).keys;
  return { publicKey: keys.public, secretKey: keys.secret };
}
const createProject = () => createProjectAs(PROJECT);

it('after deleting and re-creating a project, every worker refuses the old tenant\'s tokens and takes the new one\'s', async () => {
  const oldKeys = await createProject();
  const old = await setUpTenant(caller, oldKeys, 'old');
  // Every worker verifies each old token once, so each holds the old tenant's signing keys.
  for (const token of Object.values(old)) {
    const warm = await onEveryProcess(WORKERS, () => readPayroll(caller, oldKeys, token));
    expect(warm.map((r) => [r.status, r.salaries])).toEqual(warm.map(() => [200, ['old']]));
  }

  const deleted = await freshRequest(`${s.url}/v1/admin/projects/${PROJECT}`, { method: 'DELETE', headers: { Authorization: `Bearer ${s.operatorKey}` } });
  expect(deleted.status).toBe(200);
  const newKeys = await createProject();
  const fresh = await setUpTenant(caller, newKeys, 'new');

  // The old tokens, presented with the new tenant's key, on each worker at once: 401, no salary.
  for (const token of Object.values(old)) {
    const replies = await onEveryProcess(WORKERS, () => readPayroll(caller, newKeys, token), 2);
    expect(replies.map((r) => [r.status, r.salaries])).toEqual(replies.map(() => [401, []]));
  }
  const me = await onEveryProcess(WORKERS, () => caller({ path: '/auth/user', key: newKeys.publicKey, authUserToken: old.user }), 2);
  expect(me.map((r) => r.status)).toEqual(me.map(() => 401));

  // The new tenant's tokens work on every worker within a second.
  for (const token of Object.values(fresh)) {
    const replies = await within(1000, async () => {
      const r = await onEveryProcess(WORKERS, () => readPayroll(caller, newKeys, token), 2);
      return { done: r.every((x) => x.status === 200), value: r };
    });
    expect(replies.map((r) => [r.status, r.salaries])).toEqual(replies.map(() => [200, ['new']]));
  }
}, 60_000);

it('tokens minted for an Auth user are refused on every worker once the user is disabled, or deleted', async () => {
  const keys = await createProjectAs('minted-co');
  const tenant = await setUpTenant(callerFor('minted-co'), keys, 'minted');
  const call = callerFor('minted-co');
  const users = await call({ path: '/auth/users', key: keys.secretKey });
  const userId = (users.body as { users: Array<{ id: string }> }).users[0]!.id;
  const mint = async (user_id: string) =>
    String(((await call({ method: 'POST', path: '/auth/tokens', key: keys.secretKey, body: { user_id, claims: { role: 'hr' } } })).body as { access_token: string }).access_token);
  const reads = (token: string) => onEveryProcess(WORKERS, () => readPayroll(call, keys, token), 2);
  const statuses = (replies: Array<{ status: number }>) => replies.map((r) => r.status);

  const warm = await reads(tenant.mintedForUser);
  expect(statuses(warm)).toEqual(warm.map(() => 200));
  const disabled = await call({ method: 'PATCH', path: `/auth/users/${userId}`, key: keys.secretKey, body: { status: 'disabled' } });
  expect(disabled.status).toBe(200);
  const afterDisable = await reads(tenant.mintedForUser);
  expect(statuses(afterDisable)).toEqual(afterDisable.map(() => 401));
  // A token minted for an id that is not an Auth user is not touched.
  const outside = await reads(tenant.mintedOutside);
  expect(statuses(outside)).toEqual(outside.map(() => 200));

  // Deleting: a second Auth user, a token minted for it, then DELETE.
  const second = await call({ method: 'POST', path: '/auth/signup', key: keys.publicKey, body: { email: 'second@minted.example', password: 'correct horse battery' } });
  expect(second.status).toBe(201);
  const secondId = (second.body as { user: { id: string } }).user.id;
  const minted = await mint(secondId);
  const before = await reads(minted);
  expect(statuses(before)).toEqual(before.map(() => 200));
  expect((await call({ method: 'DELETE', path: `/auth/users/${secondId}`, key: keys.secretKey })).status).toBe(200);
  const afterDelete = await reads(minted);
  expect(statuses(afterDelete)).toEqual(afterDelete.map(() => 401));
}, 60_000);
