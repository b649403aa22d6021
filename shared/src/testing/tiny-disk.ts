import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A real, tiny file system for disk-full tests: a tmpfs of `sizeBytes` mounted on a fresh temp
 * directory (needs root, as in CI's container). `fill()` writes a filler file until the kernel
 * answers ENOSPC, so the next write of anything on it fails as on a full disk; `free()` removes
 * the filler. Nothing at the SQLite boundary is faked.
 */
export interface TinyDisk {
  dir: string;
  fill(): void;
  free(): void;
  unmount(): void;
}

export function mountTinyDisk(sizeBytes = 4 * 1024 * 1024): TinyDisk {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-tinydisk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    fs.rmdirSync(dir);
    throw new Error(`Cannot mount a tmpfs for the disk-full test (root is needed): ${String(err)}`);
  }
  const filler = path.join(dir, 'filler');
  return {
    dir,
    fill() {
      const fd = fs.openSync(filler, 'a');
      const chunk = Buffer.alloc(4096, 1);
      try {
        for (;;) fs.writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      } finally {
        fs.closeSync(fd);
      }
    },
    free() {
      fs.rmSync(filler, { force: true });
    },
    unmount() {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      fs.rmdirSync(dir);
    },
  };
}
