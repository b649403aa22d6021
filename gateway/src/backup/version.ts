import fs from 'node:fs';
import path from 'node:path';

/** The version of @plinth/gateway (src/backup and dist/backup are both two levels below its package.json). */
export function plinthVersion(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
