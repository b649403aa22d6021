/**
 * `plinth …`: the command-line client of a Plinth gateway (operator API, collections, records,
 * users, schema as code, types, doctor), and backups of a standalone data directory. Wrong usage
 * exits 2 with one line; a failed call exits 1. Every call to a deployment goes through
 * `@plinth/client` (client.ts); backup and restore load the server's code from the gateway's
 * build only when they run (commands/backup.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CliError, Connection, UsageError, describeError, type CliIo } from './client';
import { OPTIONS, type Flags } from './flags';
import { COMMANDS, MAIN, commandHelp } from './usage';

export type { CliIo } from './client';

type Handler = (args: string[], flags: Flags, conn: Connection, io: CliIo) => Promise<number>;

/**
 * Each command's module is loaded when it runs (and the SDK with it): `plinth --version` and
 * `plinth help` load neither, so they answer as fast as node starts.
 */
const HANDLERS: Readonly<Record<string, () => Promise<Handler>>> = {
  projects: async () => (await import('./commands/admin')).projectsCommand,
  keys: async () => (await import('./commands/admin')).keysCommand,
  operators: async () => (await import('./commands/operators')).operatorsCommand,
  sessions: async () => (await import('./commands/operators')).sessionsCommand,
  audit: async () => (await import('./commands/operators')).auditCommand,
  collections: async () => (await import('./commands/collections')).collectionsCommand,
  records: async () => (await import('./commands/records')).recordsCommand,
  users: async () => (await import('./commands/users')).usersCommand,
  webhooks: async () => (await import('./commands/webhooks')).webhooksCommand,
  apply: async () => (await import('./commands/apply')).applyCommand,
  pull: async () => (await import('./commands/schema')).pullCommand,
  types: async () => (await import('./commands/types')).typesCommand,
  doctor: async () => {
    const { doctorCommand } = await import('./commands/doctor');
    return (args, _flags, conn, io) => doctorCommand(args, conn, io);
  },
  backup: async () => {
    const { backupCommand } = await import('./commands/backup');
    return (args, flags, _conn, io) => backupCommand(args, flags, io);
  },
  restore: async () => {
    const { restoreCommand } = await import('./commands/backup');
    return (args, flags, _conn, io) => restoreCommand(args, flags, io);
  },
};

/** Whether `e` is the SDK's error (its module is loaded only if a command ran, so no import here). */
async function plinthError(e: unknown): Promise<import('@plinth/client/admin').PlinthError | null> {
  if (!(e instanceof Error)) return null;
  const { PlinthError } = await import('@plinth/client/admin');
  return e instanceof PlinthError ? e : null;
}

/** The version of the package this file ships in. */
export function cliVersion(): string {
  try {
    // src/ or dist/ beside package.json, in the repository and in the packed CLI alike.
    return (JSON.parse(fs.readFileSync(path.join(__dirname, '../package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Runs one CLI invocation; resolves to the process exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [first] = argv;
  const hint = first && HANDLERS[first] ? `plinth ${first} --help` : 'plinth help';
  let url = '';
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
    } catch (e) {
      throw new UsageError((e as Error).message.split('\n')[0]!.replace(/\. To specify a positional.*$/, ''));
    }
    const flags = parsed.values as Flags;
    const [command, ...rest] = parsed.positionals;
    if (flags.version) {
      io.out.write(`${cliVersion()}\n`);
      return 0;
    }
    if (command === 'help') {
      const topic = rest[0];
      if (topic && !COMMANDS[topic]) throw new UsageError(`no help for unknown command "${topic}"`);
      io.out.write(topic ? commandHelp(topic) : MAIN);
      return 0;
    }
    if (flags.help) {
      io.out.write(command && HANDLERS[command] ? commandHelp(command) : MAIN);
      return 0;
    }
    if (!command) throw new UsageError('no command given');
    const load = HANDLERS[command];
    if (!load) throw new UsageError(`unknown command "${command}"`);
    const conn = new Connection(flags, io.env);
    url = conn.url;
    return await (await load())(rest, flags, conn, io);
  } catch (e) {
    const failed = await plinthError(e);
    if (failed) {
      io.err.write(`plinth: ${describeError(failed, url)}\n`);
      return 1;
    }
    if (e instanceof UsageError) {
      io.err.write(`plinth: ${e.message} (see \`${hint}\`)\n`);
      return 2;
    }
    if (e instanceof CliError) {
      io.err.write(`plinth: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
