/** `plinth projects …` and `plinth keys …`: the operator API. */
import { exportProject, importProject } from './project-archive';
import { UsageError, printJson, type CliIo, type Connection } from '../client';
import type { Flags } from '../flags';
import { need } from './args';

export async function projectsCommand(args: string[], flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const [verb, id] = args;
  const p = (v: string) => `/v1/admin/projects/${encodeURIComponent(v)}`;
  const key = (): string => conn.requireAdminKey();
  switch (verb) {
    case 'list':
      printJson(io, await conn.ok('GET', '/v1/admin/projects', { key: key() }));
      return 0;
    case 'create':
      printJson(io, await conn.ok('POST', '/v1/admin/projects', { key: key(), body: { ...(id ? { id } : {}), ...(flags.name ? { name: flags.name } : {}) } }));
      return 0;
    case 'show':
      printJson(io, await conn.ok('GET', p(need(id, 'project id')), { key: key() }));
      return 0;
    case 'delete':
      printJson(io, await conn.ok('DELETE', p(need(id, 'project id')), { key: key() }));
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
  const p = (v: string) => `/v1/admin/projects/${encodeURIComponent(v)}/keys`;
  switch (verb) {
    case 'create': {
      const path = p(need(project, 'project id'));
      const kind = need(b, 'key kind (public or secret)');
      printJson(io, await conn.ok('POST', path, { key: conn.requireAdminKey(), body: { kind } }));
      return 0;
    }
    case 'revoke': {
      const path = `${p(need(project, 'project id'))}/${encodeURIComponent(need(b, 'key id'))}`;
      printJson(io, await conn.ok('DELETE', path, { key: conn.requireAdminKey() }));
      return 0;
    }
    default:
      throw new UsageError(verb ? `unknown command: keys ${verb}` : 'missing subcommand: keys create|revoke');
  }
}
