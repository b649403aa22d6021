/**
 * PLINTH_BACKUP_CRON / PLINTH_BACKUP_DIR / PLINTH_BACKUP_KEEP on a standalone server run as a
 * process: backups are written on the schedule, the newest KEEP complete ones are kept, an
 * unfinished one is removed, nothing else in the directory is touched, and what was kept restores.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { STANDALONE_ENTRY, startStandalone, stopStandalone } from '@plinth/testing/standalone-process';

const CLI = path.resolve(__dirname, '../../clients/cli/bin/plinth.js');
const NAME = /^plinth-backup-\d{8}T\d{6}Z$/;

describe('scheduled backups', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-backup-schedule-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('runs on the cron schedule, keeps the newest PLINTH_BACKUP_KEEP and removes unfinished ones', async () => {
    const dataDir = path.join(root, 'data');
    const backups = path.join(root, 'backups');
    fs.mkdirSync(path.join(backups, 'plinth-backup-20000101T000000Z'), { recursive: true }); // unfinished: no manifest
    fs.mkdirSync(path.join(backups, 'mine'));
    fs.writeFileSync(path.join(backups, 'mine', 'notes.txt'), 'not a backup');

    const s = await startStandalone(dataDir, { LOG_LEVEL: 'info', PLINTH_BACKUP_CRON: '*/2 * * * * *', PLINTH_BACKUP_DIR: backups, PLINTH_BACKUP_KEEP: '2' });
    const written = () =>
      s
        .output()
        .split('\n')
        .filter((line) => line.includes('"scheduled backup written"'))
        .map((line) => path.basename((JSON.parse(line) as { backup: string }).backup));
    try {
      expect(s.output()).toContain(`backups:         "*/2 * * * * *" into ${backups} (the newest 2 kept)`);
      const deadline = Date.now() + 60_000;
      while (written().length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(written().length).toBeGreaterThanOrEqual(3);
    } finally {
      // Stopping waits for a backup under way (stopped) and its prune.
      expect(await stopStandalone(s)).toBe(0);
    }
    expect(s.output()).not.toContain('scheduled backup failed');

    const names = fs.readdirSync(backups);
    const complete = names.filter((n) => NAME.test(n) && fs.existsSync(path.join(backups, n, 'manifest.json'))).sort();
    expect(complete).toEqual(written().slice(-2).sort());
    expect(names).not.toContain('plinth-backup-20000101T000000Z');
    expect(fs.readFileSync(path.join(backups, 'mine', 'notes.txt'), 'utf8')).toBe('not a backup');
    for (const n of written().slice(0, -2)) expect(names).not.toContain(n);

    const restored = path.join(root, 'restored');
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'restore', path.join(backups, complete[1]!), '--data-dir', restored], { encoding: 'utf8' });
    // Every database the server made (whatever services made them), and credentials.json.
    // Regular files, at any depth (stored files live under files/; an empty directory is not data).
    const regularFiles = (dir: string): string[] =>
      (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
        .filter((e) => e.isFile() && !/-(wal|shm)$/.test(e.name))
        .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
        .sort();
    const live = regularFiles(dataDir);
    expect(live).toEqual(expect.arrayContaining(['auth.db', 'credentials.json', 'gateway.db', 'records.db']));
    expect(JSON.parse(stdout)).toMatchObject({ data_dir: restored, files: live.length });
    expect(regularFiles(restored)).toEqual(live);
  }, 120_000);

  it('with two workers, only the primary schedules: one backup per time, none failed', async () => {
    const backups = path.join(root, 'backups-workers');
    const s = await startStandalone(path.join(root, 'data-workers'), { LOG_LEVEL: 'info', PLINTH_WORKERS: '2', PLINTH_BACKUP_CRON: '*/2 * * * * *', PLINTH_BACKUP_DIR: backups, PLINTH_BACKUP_KEEP: '5' });
    const lines = (msg: string) => s.output().split('\n').filter((line) => line.includes(`"${msg}"`));
    try {
      const deadline = Date.now() + 60_000;
      while (lines('scheduled backup written').length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    } finally {
      expect(await stopStandalone(s)).toBe(0);
    }
    expect(lines('backups scheduled')).toHaveLength(1);
    expect(lines('scheduled backup written').length).toBeGreaterThanOrEqual(2);
    expect(lines('scheduled backup failed')).toEqual([]);
    const written = lines('scheduled backup written').map((line) => (JSON.parse(line) as { backup: string }).backup);
    expect(new Set(written).size).toBe(written.length);
  }, 120_000);

  it.each([
    [{ PLINTH_BACKUP_CRON: 'every night', PLINTH_BACKUP_DIR: '/tmp/b' }, '"PLINTH_BACKUP_CRON" is not a cron expression'],
    [{ PLINTH_BACKUP_CRON: '0 3 * * *' }, '"PLINTH_BACKUP_DIR" is required'],
    [{ PLINTH_BACKUP_CRON: '0 3 * * *', PLINTH_BACKUP_DIR: 'inside' }, '"PLINTH_BACKUP_DIR" must be outside PLINTH_DATA_DIR'],
  ] as Array<[Record<string, string>, string]>)('refuses to start on a bad schedule: %j', async (env, line) => {
    const dataDir = path.join(root, 'data-refused');
    const full: NodeJS.ProcessEnv = { ...process.env, PORT: '0', PLINTH_WORKERS: '1', PLINTH_DATA_DIR: dataDir, ...env };
    if (full.PLINTH_BACKUP_DIR === 'inside') full.PLINTH_BACKUP_DIR = path.join(dataDir, 'backups');
    const run = await promisify(execFile)(process.execPath, [STANDALONE_ENTRY], { env: full, encoding: 'utf8', timeout: 30_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(line);
  });
});
