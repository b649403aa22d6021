import type { ConnectionFlags } from './client';

/** Every option the CLI knows (parsed strictly: an unknown option is a usage error). */
export const OPTIONS = {
  url: { type: 'string' },
  'admin-key': { type: 'string' },
  'secret-key': { type: 'string' },
  project: { type: 'string' },
  'data-dir': { type: 'string' },
  's3-bucket': { type: 'string' },
  passphrase: { type: 'string' },
  's3-prefix': { type: 'string' },
  name: { type: 'string' },
  where: { type: 'string' },
  'order-by': { type: 'string' },
  direction: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  search: { type: 'string' },
  status: { type: 'string' },
  out: { type: 'string', short: 'o' },
  'dry-run': { type: 'boolean' },
  'allow-data-loss': { type: 'string' },
  auth: { type: 'boolean' },
  email: { type: 'string' },
  role: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  actor: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

export interface Flags extends ConnectionFlags {
  name?: string;
  where?: string;
  'order-by'?: string;
  direction?: string;
  limit?: string;
  cursor?: string;
  search?: string;
  status?: string;
  out?: string;
  'dry-run'?: boolean;
  'allow-data-loss'?: string;
  /** `pull --auth`: write the project's Auth settings too. */
  auth?: boolean;
  email?: string;
  role?: string;
  'password-stdin'?: boolean;
  actor?: string;
  since?: string;
  until?: string;
  's3-bucket'?: string;
  passphrase?: string;
  's3-prefix'?: string;
  help?: boolean;
  version?: boolean;
}
