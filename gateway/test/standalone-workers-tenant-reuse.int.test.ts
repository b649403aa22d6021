/**
 * `npm start` with PLINTH_WORKERS=2: a project deleted on one worker and created again with the
 * same id. Every worker (each asked directly: fresh connections alternate between them, and
 * X-Plinth-Worker says which answered) must refuse the old tenant's user and minted tokens at
 * once, and take the new tenant's within a second — none may keep the old tenant's signing keys.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshRequest, startStandalone, stopStandalone, type StandaloneProcess } from '@plinth/gateway/testing/standalone-process';
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

const caller: Caller = async (c) => {
  const headers: Record<string, string> = { Authorization: `Bearer ${c.key}` };
  if (c.dbUserToken) headers['X-Db-User-Token'] = c.dbUserToken;
  if (c.authUserToken) headers['X-Auth-User-Token'] = c.authUserToken;
  const res = await freshRequest(`${s.url}/v1/projects/${PROJECT}${c.path}`, { method: c.method, headers, body: c.body });
  return { status: res.status, body: res.body, via: res.worker ?? '?' };
};

async function createProject(): Promise<TenantKeys> {
  const res = await freshRequest(`${s.url}/v1/admin/projects`, { method: 'POST', headers: { Authorization: `Bearer ${s.operatorKey}` }, body: { id: PROJECT } });
  expect(res.status).toBe(201);
  const keys = (res.body as { keys: { public: string; secret: string } }).keys;
  return { publicKey: keys.public, secretKey: keys.secret };
}

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
