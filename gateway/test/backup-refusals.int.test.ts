/**
 * What `plinth backup` and `plinth restore` refuse, each with one line on stderr and exit code 1
 * (2 for wrong usage), leaving the target as it was: a corrupted backup (a flipped byte; a damaged
 * database whose checksum was rewritten to match), an unfinished one, a non-empty target, a
 * backup directory inside the data directory. The data directory is a real one, written by a
 * standalone server run as a process; the CLI runs in-process (runCli).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sha256File } from '../src/backup/manifest';
import { runCli } from '../../clients/cli/src/run';
import { startStandalone, stopStandalone } from '@plinth/testing/standalone-process';

const STORED = Buffer.from([0, 1, 2, 255, 254, 10, 13]);

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, { env: {}, out: { write: (s: string) => (out += s) }, err: { write: (s: string) => (err += s) } });
  return { code, out, err };
}

describe('plinth backup and restore refuse', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-backup-refusals-'));
  const dataDir = path.join(root, 'data');
  const good = path.join(root, 'good');
  let n = 0;
  /** A fresh copy of the good backup, to damage. */
  const copyOfGood = () => {
    const dir = path.join(root, `copy-${++n}`);
    fs.cpSync(good, dir, { recursive: true });
    return dir;
  };
  const fresh = () => path.join(root, `target-${++n}`);

  beforeAll(async () => {
    const s = await startStandalone(dataDir);
    try {
      const res = await fetch(`${s.url}/v1/projects/demo/collections`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${s.secretKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'refusal_notes', fields: { body: { type: 'text' } } }),
      });
      expect(res.status).toBe(201);
    } finally {
      await stopStandalone(s);
    }
    // Stored files in a sub-directory (as a file store would keep them) are copied as they are.
    fs.mkdirSync(path.join(dataDir, 'files', 'demo'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'files', 'demo', 'photo.bin'), STORED);
    expect(await cli('backup', good, '--data-dir', dataDir)).toMatchObject({ code: 0, err: '' });
  }, 60_000);
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('a backup with one flipped byte: the checksum names the file, and nothing is restored', async () => {
    const bad = copyOfGood();
    const file = path.join(bad, 'records.db');
    const bytes = fs.readFileSync(file);
    bytes[bytes.length - 100] ^= 0xff;
    fs.writeFileSync(file, bytes);
    const target = fresh();
    expect(await cli('restore', bad, '--data-dir', target)).toEqual({
      code: 1,
      out: '',
      err: 'plinth: the backup is corrupted: records.db does not match its checksum in the manifest\n',
    });
    expect(fs.existsSync(target)).toBe(false);
  });

  it('a damaged database whose checksum was rewritten to match: the integrity check refuses it', async () => {
    const bad = copyOfGood();
    const file = path.join(bad, 'gateway.db');
    const bytes = fs.readFileSync(file);
    // Page 2 onwards (the tables' b-tree pages) overwritten with garbage; the header (page 1) intact.
    for (let i = 4096; i < bytes.length; i++) bytes[i] = (i * 7) & 0xff;
    fs.writeFileSync(file, bytes);
    const manifestFile = path.join(bad, 'manifest.json');
    const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as { files: Array<{ path: string; sha256: string }> };
    manifest.files.find((f) => f.path === 'gateway.db')!.sha256 = sha256File(file);
    fs.writeFileSync(manifestFile, JSON.stringify(manifest));
    const target = fresh();
    const r = await cli('restore', bad, '--data-dir', target);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^plinth: the backup is corrupted: gateway\.db: integrity check failed: .+\n$/);
    expect(r.err.split('\n')).toHaveLength(2);
    expect(fs.existsSync(target)).toBe(false);
  });

  it('an unfinished backup (no manifest) and a missing file', async () => {
    const unfinished = copyOfGood();
    fs.rmSync(path.join(unfinished, 'manifest.json'));
    expect(await cli('restore', unfinished, '--data-dir', fresh())).toMatchObject({ code: 1, err: `plinth: ${unfinished} is not a complete Plinth backup: it has no manifest.json\n` });
    const missing = copyOfGood();
    fs.rmSync(path.join(missing, 'credentials.json'));
    expect(await cli('restore', missing, '--data-dir', fresh())).toMatchObject({ code: 1, err: 'plinth: the backup is corrupted: credentials.json is missing\n' });
  });

  it('a data directory that is not empty is left as it was', async () => {
    const target = fresh();
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, 'records.db'), 'mine');
    const r = await cli('restore', good, '--data-dir', target);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`plinth: refusing to restore into ${target}: it is not an empty directory (restore into a new one, then point PLINTH_DATA_DIR at it)\n`);
    expect(fs.readdirSync(target)).toEqual(['records.db']);
    expect(fs.readFileSync(path.join(target, 'records.db'), 'utf8')).toBe('mine');
  });

  it('a backup into a non-empty directory or inside the data directory, and wrong usage', async () => {
    const full = fresh();
    fs.mkdirSync(full);
    fs.writeFileSync(path.join(full, 'x'), '');
    expect(await cli('backup', full, '--data-dir', dataDir)).toMatchObject({ code: 1, err: `plinth: cannot back up into ${full} is not empty\n` });
    const inside = path.join(dataDir, 'backups');
    expect(await cli('backup', inside, '--data-dir', dataDir)).toMatchObject({ code: 1, err: `plinth: the backup directory ${inside} is inside the data directory; choose one outside it\n` });
    expect(fs.existsSync(inside)).toBe(false);
    expect(await cli('backup', fresh(), '--data-dir', path.join(root, 'nothing'))).toMatchObject({ code: 1, err: `plinth: no data directory at ${path.join(root, 'nothing')}\n` });
    expect(await cli('backup')).toMatchObject({ code: 2, err: 'plinth: missing backup directory (see `plinth backup --help`)\n' });
    expect(await cli('restore', good, 'extra')).toMatchObject({ code: 2, err: 'plinth: unexpected argument "extra" to restore (see `plinth restore --help`)\n' });
  });

  it('the good backup restores, stored files included, every file private to this user', async () => {
    const target = fresh();
    const r = await cli('restore', good, '--data-dir', target);
    expect(r.code).toBe(0);
    expect(fs.readFileSync(path.join(target, 'files', 'demo', 'photo.bin'))).toEqual(STORED);
    const files = (dir: string) => (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(dir, f)).isFile());
    // Every file the server left (every service's database, credentials.json) and the stored file.
    const live = files(dataDir).filter((f) => !/-(wal|shm)$/.test(f)).sort();
    expect(live).toEqual(expect.arrayContaining(['auth.db', 'credentials.json', 'files/demo/photo.bin', 'gateway.db', 'records.db']));
    expect(JSON.parse(r.out)).toMatchObject({ data_dir: target, files: live.length });
    expect(files(target).sort()).toEqual(live);
    for (const dir of [target, good]) for (const f of files(dir)) expect([f, fs.statSync(path.join(dir, f)).mode & 0o777]).toEqual([f, 0o600]);
  });
});
