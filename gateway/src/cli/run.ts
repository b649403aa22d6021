import { parseArgs } from 'node:util';
import { readCredentials } from '../bootstrap';

export interface CliIo {
  env: NodeJS.ProcessEnv;
  out: { write(s: string): unknown };
  err: { write(s: string): unknown };
}

const USAGE = `Usage: plinth <command> [options]

Commands (over the operator API, DESIGN.md §4):
  projects list
  projects create [id] [--name NAME]      prints the new project's keys (shown once)
  projects show <id>
  projects delete <id>
  keys create <project> <public|secret>   prints the new key (shown once)
  keys revoke <project> <key_id>

Options:
  --url URL          gateway URL (default: $PLINTH_URL or http://localhost:8080)
  --admin-key KEY    operator key (default: $PLINTH_ADMIN_KEY, else the one in
                     <data dir>/credentials.json that standalone mode wrote)
  --data-dir DIR     where to look for credentials.json (default: $PLINTH_DATA_DIR or ./data)
`;

class UsageError extends Error {}

interface Call {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: object;
}

/** Maps the command words to one operator API call. */
function toCall(words: string[], name: string | undefined): Call {
  const [noun, verb, a, b] = words;
  const need = (v: string | undefined, what: string): string => {
    if (!v) throw new UsageError(`missing ${what}`);
    return v;
  };
  const p = (id: string) => `/v1/admin/projects/${encodeURIComponent(id)}`;
  switch (`${noun} ${verb}`) {
    case 'projects list':
      return { method: 'GET', path: '/v1/admin/projects' };
    case 'projects create':
      return { method: 'POST', path: '/v1/admin/projects', body: { ...(a ? { id: a } : {}), ...(name ? { name } : {}) } };
    case 'projects show':
      return { method: 'GET', path: p(need(a, 'project id')) };
    case 'projects delete':
      return { method: 'DELETE', path: p(need(a, 'project id')) };
    case 'keys create':
      return { method: 'POST', path: `${p(need(a, 'project id'))}/keys`, body: { kind: need(b, 'key kind (public or secret)') } };
    case 'keys revoke':
      return { method: 'DELETE', path: `${p(need(a, 'project id'))}/keys/${encodeURIComponent(need(b, 'key id'))}` };
    default:
      throw new UsageError(noun ? `unknown command: ${words.join(' ')}` : 'no command given');
  }
}

/** Runs one CLI invocation; resolves to the process exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        'admin-key': { type: 'string' },
        'data-dir': { type: 'string' },
        name: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    io.err.write(`plinth: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out.write(USAGE);
    return 0;
  }
  let call: Call;
  try {
    call = toCall(positionals, values.name);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.err.write(`plinth: ${e.message}\n\n${USAGE}`);
    return 2;
  }
  const url = (values.url ?? io.env.PLINTH_URL ?? 'http://localhost:8080').replace(/\/+$/, '');
  const dataDir = values['data-dir'] ?? io.env.PLINTH_DATA_DIR ?? './data';
  const adminKey = values['admin-key'] ?? io.env.PLINTH_ADMIN_KEY ?? readCredentials(dataDir).admin_key;
  if (!adminKey) {
    io.err.write('plinth: no operator key: pass --admin-key or set PLINTH_ADMIN_KEY\n');
    return 2;
  }
  let res: Response;
  try {
    res = await fetch(url + call.path, {
      method: call.method,
      headers: { Authorization: `Bearer ${adminKey}`, ...(call.body ? { 'Content-Type': 'application/json' } : {}) },
      body: call.body ? JSON.stringify(call.body) : undefined,
    });
  } catch (e) {
    io.err.write(`plinth: cannot reach ${url}: ${(e as Error).message}\n`);
    return 1;
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: print as is
  }
  const rendered = typeof body === 'string' ? body : JSON.stringify(body, null, 2);
  if (!res.ok) {
    io.err.write(`plinth: ${res.status} ${rendered}\n`);
    return 1;
  }
  io.out.write(`${rendered}\n`);
  return 0;
}
