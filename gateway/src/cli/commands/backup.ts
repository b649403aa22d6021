/**
 * `plinth backup <dir>` and `plinth restore <backup>`: these work on the files of a standalone data
 * directory (`--data-dir`, else $PLINTH_DATA_DIR, else ./data), not over HTTP, so they run on the
 * machine that holds it, from a Plinth installation: the backup code needs better-sqlite3, which
 * the packed CLI does not ship. It is loaded only when one of these commands runs.
 */
import path from 'node:path';
import { CliError, printJson, UsageError, type CliIo } from '../client';
import type { Flags } from '../flags';
import { need } from './args';

type BackupModule = typeof import('../../backup');

function loadBackup(): BackupModule {
  try {
    // A computed path: the packed CLI has no backup module, and its packer refuses a literal one.
    return require(path.join(__dirname, '..', '..', 'backup')) as BackupModule;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw e;
    throw new CliError('backup and restore run from a Plinth installation (next to its data directory), not from the packed CLI');
  }
}

function dataDir(flags: Flags, env: NodeJS.ProcessEnv): string {
  return flags['data-dir'] ?? env.PLINTH_DATA_DIR ?? './data';
}

function extra(args: string[], command: string): void {
  if (args.length > 1) throw new UsageError(`unexpected argument "${args[1]}" to ${command}`);
}

export async function backupCommand(args: string[], flags: Flags, io: CliIo): Promise<number> {
  const out = need(args[0], 'backup directory');
  extra(args, 'backup');
  const backup = loadBackup();
  try {
    const manifest = await backup.takeBackup({ dataDir: dataDir(flags, io.env), outDir: out });
    printJson(io, { backup: path.resolve(out), ...manifest });
    return 0;
  } catch (e) {
    if (e instanceof backup.BackupError) throw new CliError(e.message);
    throw e;
  }
}

export async function restoreCommand(args: string[], flags: Flags, io: CliIo): Promise<number> {
  const from = need(args[0], 'backup directory');
  extra(args, 'restore');
  const backup = loadBackup();
  const target = dataDir(flags, io.env);
  try {
    const manifest = backup.restoreBackup({ backupDir: from, dataDir: target });
    printJson(io, { restored: path.resolve(from), data_dir: path.resolve(target), point_in_time: manifest.point_in_time, files: manifest.files.length });
    return 0;
  } catch (e) {
    if (e instanceof backup.BackupError) throw new CliError(e.message);
    throw e;
  }
}
