/**
 * Scheduled backups of a standalone server (PLINTH_BACKUP_CRON, PLINTH_BACKUP_DIR,
 * PLINTH_BACKUP_KEEP): at each time the cron expression names, `plinth backup` runs as a child
 * process into `<dir>/plinth-backup-<UTC time>`, then backups beyond the newest `keep` are removed.
 * A child process, so that copying and checking a large database never holds up a process that
 * serves requests; one at a time, so a slow backup makes the next one wait, not pile up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { nextRun } from './cron';
import { MANIFEST_FILE } from './manifest';

export interface BackupScheduleOptions {
  /** Five fields (minute hour day month weekday) or six (seconds first), in the server's time zone. */
  cron: string;
  dir: string;
  /** How many complete backups to keep (the newest). */
  keep: number;
  dataDir: string;
  logger: Logger;
}

export interface BackupSchedule {
  /** Stops the timer, and a backup under way (its unfinished directory is removed at the next prune). */
  stop(): Promise<void>;
}

const NAME = /^plinth-backup-\d{8}T\d{6}Z$/;
/** setTimeout's longest delay; a later time is reached in several waits. */
const MAX_DELAY_MS = 2 ** 31 - 1;
/** The `plinth` CLI of this installation (clients/cli), which loads the backup code from gateway/dist. */
const CLI = path.join(__dirname, '../../../clients/cli/bin/plinth.js');

/** `plinth-backup-20260102T030000Z`: sorts by time as text. */
export function backupName(at: Date): string {
  return `plinth-backup-${at.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '')}`;
}

export function startBackupSchedule(opts: BackupScheduleOptions): BackupSchedule {
  const log = opts.logger.child({ component: 'backup' });
  let timer: NodeJS.Timeout | undefined;
  let child: ChildProcess | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const arm = (at: Date) => {
    if (stopped) return;
    const delay = at.getTime() - Date.now();
    timer = setTimeout(() => (delay > MAX_DELAY_MS ? arm(at) : fire(at)), Math.max(0, Math.min(delay, MAX_DELAY_MS)));
    timer.unref();
  };
  const fire = (at: Date) => {
    arm(nextRun(opts.cron, new Date(Math.max(Date.now(), at.getTime()))));
    if (running) {
      log.warn({ at }, 'scheduled backup skipped: the previous one is still running');
      return;
    }
    running = runOnce(at).finally(() => (running = undefined));
  };
  const runOnce = async (at: Date) => {
    const out = path.join(opts.dir, backupName(at));
    const started = Date.now();
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      let err = '';
      child = spawn(process.execPath, [CLI, 'backup', out, '--data-dir', opts.dataDir], { stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
      child.on('error', (e) => resolve({ code: null, stderr: e.message }));
      child.on('close', (c) => resolve({ code: c, stderr: err }));
    });
    child = undefined;
    if (code === 0) {
      log.info({ backup: out, ms: Date.now() - started }, 'scheduled backup written');
    } else if (stopped) {
      log.info({ backup: out }, 'scheduled backup stopped with the server (its directory is removed)');
    } else {
      log.error({ backup: out, code, error: stderr.trim().split('\n').pop() }, 'scheduled backup failed');
    }
    try {
      const removed = pruneBackups(opts.dir, opts.keep);
      if (removed.length) log.info({ removed }, 'old backups removed');
    } catch (e) {
      log.error({ err: e }, 'pruning backups failed');
    }
  };

  fs.mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
  arm(nextRun(opts.cron, new Date()));
  log.info({ cron: opts.cron, dir: opts.dir, keep: opts.keep }, 'backups scheduled');
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      child?.kill('SIGTERM');
      await running;
    },
  };
}

/**
 * Keeps the newest `keep` complete backups (with a manifest) of `dir` and removes the others, and
 * every unfinished one (no manifest: a backup that failed or was stopped). Only directories named
 * like scheduled backups are touched. Resolves to the names removed. Call it only while no
 * scheduled backup runs.
 */
export function pruneBackups(dir: string, keep: number): string[] {
  const names = fs.readdirSync(dir).filter((n) => NAME.test(n)).sort().reverse();
  const complete = names.filter((n) => fs.existsSync(path.join(dir, n, MANIFEST_FILE)));
  const doomed = [...names.filter((n) => !complete.includes(n)), ...complete.slice(keep)];
  for (const n of doomed) fs.rmSync(path.join(dir, n), { recursive: true, force: true });
  return doomed.sort();
}
