/** `plinth projects …` and `plinth keys …`: the operator API (`@plinth/client/operator`). */
import { exportProject, importProject } from './project-archive';
import { UsageError, printJson, type CliIo, type Connection } from '../client';
import type { Flags } from '../flags';
import { need } from './args';

export async function projectsCommand(args: string[], flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const [verb, id] = args;
  switch (verb) {
    case 'list':
      printJson(io, { projects: await conn.operator().projects.list() });
      return 0;
    case 'create':
      printJson(io, await conn.operator().projects.create({ ...(id ? { id } : {}), ...(flags.name ? { name: flags.name } : {}) }));
      return 0;
    case 'show':
      printJson(io, await conn.operator().projects.get(need(id, 'project id')));
      return 0;
    case 'delete':
      printJson(io, await conn.operator().projects.delete(need(id, 'project id')));
      return 0;
    case 'export':
      return exportProject(need(id, 'project id'), flags, conn, io);
    case 'import':
      return importProject(need(id, 'archive file'), flags, conn, io);
    default:
      throw new UsageError(verb ? `unknown command: projects ${verb}` : 'missing subcommand: projects list|create|show|delete|export|import');
  }
}

export async function keysCommand(args: string[], _flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const [verb, project, b] = args;
  switch (verb) {
    case 'create': {
      const id = need(project, 'project id');
      const kind = need(b, 'key kind (public or secret)');
      // The server judges the kind (400 for another word), as it always did.
      printJson(io, { key: await conn.operator().keys.create(id, kind as 'public' | 'secret') });
      return 0;
    }
    case 'revoke': {
      const id = need(project, 'project id');
      printJson(io, await conn.operator().keys.revoke(id, need(b, 'key id')));
      return 0;
    }
    default:
      throw new UsageError(verb ? `unknown command: keys ${verb}` : 'missing subcommand: keys create|revoke');
  }
}
