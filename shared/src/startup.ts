import Joi from 'joi';
import { ConfigError, commonConfig, loadConfig } from './config';

/**
 * Start-up checks of the cluster processes, and how every `main.ts` fails: one clear line on
 * stderr and exit code 1, never a stack trace.
 */

/** A reason not to start, written to stderr as is. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

/** Markers of the example values in k8s/secret.yaml: a process never runs with them. */
const PLACEHOLDER = /replace-with-|replace-me/i;
const SECRET_VARIABLES = ['PLINTH_ADMIN_KEY', 'PLINTH_INTERNAL_SECRET', 'MONGO_URL', 'REDIS_URL', 'SMTP_URL'] as const;

/** Throws StartupError naming the first variable that still holds an example value of k8s/secret.yaml. */
export function refusePlaceholders(env: NodeJS.ProcessEnv = process.env): void {
  for (const name of SECRET_VARIABLES) {
    const value = env[name];
    if (value !== undefined && PLACEHOLDER.test(value)) {
      throw new StartupError(`${name} still holds the example value of k8s/secret.yaml: set a real value before starting.`);
    }
  }
}

const storageSchema = Joi.object<{ MONGO_URL?: string; PLINTH_STORAGE?: 'mongo' | 'sqlite' }>({
  MONGO_URL: commonConfig.mongoUrl,
  PLINTH_STORAGE: Joi.string().valid('mongo', 'sqlite'),
});

/**
 * A cluster process stores data in MongoDB: without MONGO_URL it refuses to start, rather than
 * quietly writing SQLite files to a pod's temporary disk. `PLINTH_STORAGE=sqlite` chooses the
 * SQLite files in PLINTH_DATA_DIR on purpose (one machine, tests).
 */
export function requireClusterStorage(service: string, env: NodeJS.ProcessEnv = process.env): void {
  const { MONGO_URL, PLINTH_STORAGE } = loadConfig(storageSchema, env);
  if (PLINTH_STORAGE === 'sqlite') return;
  if (!MONGO_URL) {
    throw new StartupError(
      `MONGO_URL is not set: the ${service} service stores its data in MongoDB. Set MONGO_URL, or PLINTH_STORAGE=sqlite to use SQLite files in PLINTH_DATA_DIR on this machine.`,
    );
  }
}

/** The one line printed when start-up fails. */
export function startupFailure(err: unknown): string {
  if (err instanceof StartupError || err instanceof ConfigError) return err.message;
  const e = err as (NodeJS.ErrnoException & { port?: number; address?: string }) | null;
  if (e?.code === 'EADDRINUSE') {
    return `Cannot listen on ${e.address ?? ''}${e.address ? ':' : 'port '}${e.port ?? ''}: the port is already in use. Stop the other process or choose another port (PORT).`;
  }
  if (e?.code === 'EACCES' && e.syscall === 'listen') {
    return `Cannot listen on port ${e.port ?? ''}: permission denied. Choose a port above 1023 (PORT).`;
  }
  return `Cannot start: ${err instanceof Error ? err.message : String(err)}`;
}

/** Runs a process's `main`; a failure before it serves prints one line and exits 1. */
export function runMain(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`${startupFailure(err)}\n`);
    process.exit(1);
  });
}
