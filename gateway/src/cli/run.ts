/**
 * `plinth …`: the command-line client of a Plinth gateway (operator API, collections, records,
 * users, schema as code, types, doctor), and backups of a standalone data directory. Wrong usage exits 2 with one line; a failed call exits 1.
 * Imports nothing outside src/cli, so it can be packed and run on its own (npm run pack:cli).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CliError, Connection, UsageError, type CliIo } from './client';
import { keysCommand, projectsCommand } from './commands/admin';
import { auditCommand, operatorsCommand, sessionsCommand } from './commands/operators';
import { backupCommand, restoreCommand } from './commands/backup';
import { collectionsCommand } from './commands/collections';
import { doctorCommand } from './commands/doctor';
import { recordsCommand } from './commands/records';
import { applyCommand } from './commands/apply';
import { pullCommand } from './commands/schema';
import { typesCommand } from './commands/types';
import { usersCommand } from './commands/users';
import { webhooksCommand } from './commands/webhooks';
import { OPTIONS, type Flags } from './flags';
import { COMMANDS, MAIN, commandHelp } from './usage';

export type { CliIo } from './client';

type Handler = (args: string[], flags: Flags, conn: Connection, io: CliIo) => Promise<number>;

const HANDLERS: Readonly<Record<string, Handler>> = {
  projects: projectsCommand,
  keys: keysCommand,
  operators: operatorsCommand,
  sessions: sessionsCommand,
  audit: auditCommand,
  collections: collectionsCommand,
  records: recordsCommand,
  users: usersCommand,
  webhooks: webhooksCommand,
  apply: applyCommand,
  pull: pullCommand,
  types: typesCommand,
  doctor: (args, _flags, conn, io) => doctorCommand(args, conn, io),
  backup: (args, flags, _conn, io) => backupCommand(args, flags, io),
  restore: (args, flags, _conn, io) => restoreCommand(args, flags, io),
};

/** The version of the package this file ships in. */
export function cliVersion(): string {
  for (const rel of ['../../package.json', '../package.json']) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, rel), 'utf8')) as { version?: string; bin?: unknown };
      if (pkg.version && pkg.bin) return pkg.version;
    } catch {
      // try the next candidate
    }
  }
  return 'unknown';
}

/** Runs one CLI invocation; resolves to the process exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [first] = argv;
  const hint = first && HANDLERS[first] ? `plinth ${first} --help` : 'plinth help';
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
    const handler = HANDLERS[command];
    if (!handler) throw new UsageError(`unknown command "${command}"`);
    return await handler(rest, flags, new Connection(flags, io.env), io);
  } catch (e) {
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
