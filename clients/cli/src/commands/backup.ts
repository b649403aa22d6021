/**
 * `plinth backup <dir>` and `plinth restore <backup>`: these work on the files of a standalone data
 * directory (`--data-dir`, else $PLINTH_DATA_DIR, else ./data), not over HTTP, so they run on the
 * machine that holds it, from a Plinth installation: the backup code is the server's own (and
 * needs better-sqlite3), loaded from the gateway's build only when one of these commands runs
 * (server-code.ts); the packed CLI does not ship it.
 */
import path from 'node:path';
import type * as Backup from '@plinth/gateway/backup';
import { CliError, printJson, UsageError, type CliIo } from '../client';
import type { Flags } from '../flags';
import { loadServerModule } from '../server-code';
import { need } from './args';

type BackupModule = typeof Backup;
type S3BackupTarget = Backup.S3BackupTarget;

const loadBackup = (): BackupModule => loadServerModule<BackupModule>('backup', 'backup and restore');

function dataDir(flags: Flags, env: NodeJS.ProcessEnv): string {
  return flags['data-dir'] ?? env.PLINTH_DATA_DIR ?? './data';
}

function extra(args: string[], command: string): void {
  if (args.length > 1) throw new UsageError(`unexpected argument "${args[1]}" to ${command}`);
}

/**
 * Where to upload the backup, if anywhere: `--s3-bucket`/`--s3-prefix`, else
 * PLINTH_BACKUP_S3_BUCKET/PLINTH_BACKUP_S3_PREFIX; the endpoint, region and credentials only from
 * the environment (PLINTH_BACKUP_S3_ENDPOINT, _REGION, _FORCE_PATH_STYLE, _ACCESS_KEY_ID,
 * _SECRET_ACCESS_KEY; without the last two, the AWS SDK's own chain).
 */
function s3Target(flags: Flags, env: NodeJS.ProcessEnv): S3BackupTarget | undefined {
  const bucket = flags['s3-bucket'] ?? env.PLINTH_BACKUP_S3_BUCKET;
  if (!bucket) {
    if (flags['s3-prefix'] !== undefined) throw new UsageError('--s3-prefix needs --s3-bucket (or PLINTH_BACKUP_S3_BUCKET)');
    return undefined;
  }
  const id = env.PLINTH_BACKUP_S3_ACCESS_KEY_ID;
  const secret = env.PLINTH_BACKUP_S3_SECRET_ACCESS_KEY;
  if (!id !== !secret) throw new UsageError('set both PLINTH_BACKUP_S3_ACCESS_KEY_ID and PLINTH_BACKUP_S3_SECRET_ACCESS_KEY, or neither');
  const pathStyle = env.PLINTH_BACKUP_S3_FORCE_PATH_STYLE;
  if (pathStyle !== undefined && pathStyle !== 'true' && pathStyle !== 'false') throw new UsageError('PLINTH_BACKUP_S3_FORCE_PATH_STYLE must be true or false');
  return {
    bucket,
    prefix: flags['s3-prefix'] ?? env.PLINTH_BACKUP_S3_PREFIX,
    endpoint: env.PLINTH_BACKUP_S3_ENDPOINT || undefined,
    region: env.PLINTH_BACKUP_S3_REGION || 'us-east-1',
    forcePathStyle: pathStyle === 'true',
    credentials: id && secret ? { accessKeyId: id, secretAccessKey: secret } : undefined,
  };
}

export async function backupCommand(args: string[], flags: Flags, io: CliIo): Promise<number> {
  const out = need(args[0], 'backup directory');
  extra(args, 'backup');
  const target = s3Target(flags, io.env);
  const backup = loadBackup();
  try {
    if (target) await backup.checkS3Target(target);
    const manifest = await backup.takeBackup({ dataDir: dataDir(flags, io.env), outDir: out });
    if (!target) {
      printJson(io, { backup: path.resolve(out), ...manifest });
      return 0;
    }
    let uploaded;
    try {
      uploaded = await backup.uploadBackup(out, manifest, target);
    } catch (e) {
      if (e instanceof backup.BackupError) throw new CliError(`the backup in ${path.resolve(out)} is complete, but ${e.message}`);
      throw e;
    }
    printJson(io, { backup: path.resolve(out), ...manifest, uploaded });
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
