/**
 * Standalone with the default configuration (SQLite, no REDIS_URL, no MONGO_URL, no SMTP_URL)
 * must not load the driver libraries it does not use: each costs memory in every process.
 * `npm start` runs here with two workers (three processes); a preloaded script records, as each
 * process exits, which modules it loaded.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshRequest, startStandalone, stopStandalone } from '@plinth/testing/standalone-process';

const DRIVERS = ['mongodb', 'bullmq', 'ioredis', 'nodemailer'];

/** Written into each process through NODE_OPTIONS=--require: on exit, its loaded modules. */
const REPORTER = `
const fs = require('node:fs');
const path = require('node:path');
process.on('exit', () => {
  fs.writeFileSync(path.join(process.env.PLINTH_TEST_MODULES_DIR, process.pid + '.json'), JSON.stringify(Object.keys(require.cache)));
});
`;

/** The driver packages among `modules` (paths under node_modules/<name>/). */
function driversIn(modules: string[]): string[] {
  const found = new Set<string>();
  for (const m of modules) {
    const match = /node_modules[\\/]([^\\/]+)[\\/]/.exec(m);
    if (match && DRIVERS.includes(match[1]!)) found.add(match[1]!);
  }
  return [...found].sort();
}

it('standalone with the default configuration loads none of mongodb, bullmq, ioredis, nodemailer', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-drivers-'));
  const dataDir = path.join(dir, 'data');
  const reports = path.join(dir, 'modules');
  fs.mkdirSync(dataDir);
  fs.mkdirSync(reports);
  const reporter = path.join(dir, 'report-modules.js');
  fs.writeFileSync(reporter, REPORTER);
  try {
    const s = await startStandalone(dataDir, {
      PLINTH_WORKERS: '2',
      PLINTH_BCRYPT_COST: '4',
      PLINTH_TEST_MODULES_DIR: reports,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${reporter}`.trim(),
    });
    try {
      // Exercise records, auth and the mail queue on both workers, so lazily loaded paths run too.
      const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
      const api = (p: string) => `${s.url}/v1/projects/demo${p}`;
      const settings = await freshRequest(api('/settings/auth'), { method: 'PATCH', headers: bearer(s.secretKey), body: { enabled: true } });
      expect(settings.status).toBe(200);
      const col = await freshRequest(api('/collections'), { method: 'POST', headers: bearer(s.secretKey), body: { name: 'drv_notes', fields: { n: { type: 'number' } } } });
      expect(col.status).toBe(201);
      for (let i = 0; i < 2; i++) {
        const rec = await freshRequest(api('/collections/drv_notes/records'), { method: 'POST', headers: bearer(s.secretKey), body: { data: { n: i } } });
        expect(rec.status).toBe(201);
        const signup = await freshRequest(api('/auth/signup'), { method: 'POST', headers: bearer(s.publicKey), body: { email: `drv${i}@drivers.example`, password: 'correct horse battery' } });
        expect(signup.status).toBe(201);
      }
    } finally {
      expect(await stopStandalone(s)).toBe(0);
    }
    const files = fs.readdirSync(reports);
    expect(files).toHaveLength(3); // the primary and two workers
    const loaded: Record<string, string[]> = {};
    for (const file of files) {
      const modules = JSON.parse(fs.readFileSync(path.join(reports, file), 'utf8')) as string[];
      expect(modules.some((m) => m.includes(`${path.sep}gateway${path.sep}dist${path.sep}`))).toBe(true);
      loaded[`pid ${path.basename(file, '.json')}`] = driversIn(modules);
    }
    expect(loaded).toEqual(Object.fromEntries(Object.keys(loaded).map((pid) => [pid, []])));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);
