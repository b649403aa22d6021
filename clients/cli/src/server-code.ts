/**
 * The server's own code, for the commands that work on a standalone data directory's files
 * instead of over HTTP (backup, restore): loaded from the gateway's build (`gateway/dist`) of the
 * Plinth installation this CLI sits in — the repository or the container image — and only when
 * such a command runs, so every other command (and `plinth --version`) starts without it. The
 * packed CLI ships no server: there these commands say so and exit 1.
 */
import path from 'node:path';
import { CliError } from './client';

/** `gateway/dist` beside `clients/cli` (this file is in clients/cli/src or clients/cli/dist). */
const GATEWAY_DIST = path.resolve(__dirname, '..', '..', '..', 'gateway', 'dist');

/** `gateway/dist/<name>`, or a CliError saying what `what` needs. */
export function loadServerModule<T>(name: string, what: string): T {
  try {
    // A computed path: bundlers leave it alone, and the packed CLI has nothing there.
    return require(path.join(GATEWAY_DIST, name)) as T;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw e;
    throw new CliError(`${what} run from a Plinth installation (next to its data directory), not from the packed CLI`);
  }
}
