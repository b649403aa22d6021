/**
 * Black box: the standalone entry as `npm start` runs it (default workers: one per core), used
 * as an operator would. A project is deleted and created again with the same id; every token of
 * the old tenant — an Auth user's, and tokens minted with a custom claim — is refused, and the
 * new tenant's data is never read with them, whichever worker a connection reaches.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshRequest, startStandalone, stopStandalone, type StandaloneProcess } from '@plinth/testing/standalone-process';
import { readPayroll, setUpTenant, within, type Caller, type TenantKeys } from '../../test/e2e/support/tenant-reuse';

let s: StandaloneProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-start-reuse-'));
  // PLINTH_WORKERS unset: the default of `npm start`.
  s = await startStandalone(dataDir, { PLINTH_WORKERS: '', PLINTH_BCRYPT_COST: '4' });
}, 60_000);

afterAll(async () => {
  if (s) await stopStandalone(s);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const PROJECT = 'hr-app';
const caller: Caller = async (c) => {
  const headers: Record<string, string> = { Authorization: `Bearer ${c.key}` };
  if (c.dbUserToken) headers['X-Db-User-Token'] = c.dbUserToken;
  if (c.authUserToken) headers['X-Auth-User-Token'] = c.authUserToken;
  const res = await freshRequest(`${s.url}/v1/projects/${PROJECT}${c.path}`, { method: c.method, headers, body: c.body });
  return { status: res.status, body: res.body, via: res.worker ?? '1' };
};
const admin = (method: string, p: string, body?: unknown) =>
  freshRequest(`${s.url}/v1/admin/projects${p}`, { method, headers: { Authorization: `Bearer ${s.operatorKey}` }, body });

async function createProject(): Promise<TenantKeys> {
  const res = await admin('POST', '', { id: PROJECT });
  expect(res.status).toBe(201);
  const keys = (res.body as { keys: { public: string; secret: string } }).keys;
  return { publicKey: keys.public, secretKey: keys.secret };
}

it('deleting and re-creating a project: every old token is refused, the new tenant works', async () => {
  const oldKeys = await createProject();
  const old = await setUpTenant(caller, oldKeys, 'old');
  for (const token of Object.values(old)) {
    for (let i = 0; i < 4; i++) expect((await readPayroll(caller, oldKeys, token)).status).toBe(200);
  }

  expect((await admin('DELETE', `/${PROJECT}`)).status).toBe(200);
  const newKeys = await createProject();
  const fresh = await setUpTenant(caller, newKeys, 'new');

  for (const token of Object.values(old)) {
    const replies = [];
    for (let i = 0; i < 6; i++) replies.push(await readPayroll(caller, newKeys, token));
    expect(replies.map((r) => [r.status, r.salaries])).toEqual(replies.map(() => [401, []]));
    const me = await caller({ path: '/auth/user', key: newKeys.publicKey, authUserToken: token });
    expect(me.status).toBe(401);
  }
  for (const token of Object.values(fresh)) {
    const replies = await within(1000, async () => {
      const r = [];
      for (let i = 0; i < 4; i++) r.push(await readPayroll(caller, newKeys, token));
      return { done: r.every((x) => x.status === 200), value: r };
    });
    expect(replies.map((r) => [r.status, r.salaries])).toEqual(replies.map(() => [200, ['new']]));
  }
}, 60_000);
