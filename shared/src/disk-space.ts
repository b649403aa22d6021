import fs from 'node:fs';
import { InsufficientStorageError } from './errors';

/** Below this much free space the disk under PLINTH_DATA_DIR counts as full for readiness. */
export const MIN_FREE_DISK_BYTES = 1024 * 1024;

/**
 * For `/readyz`: throws InsufficientStorageError when the file system holding `dir` has less
 * than `minFreeBytes` available, so a node whose disk filled up is taken out of rotation (its
 * writes would answer 507 `insufficient_storage`). Reads keep working meanwhile.
 */
export function assertDiskSpace(dir: string, minFreeBytes = MIN_FREE_DISK_BYTES): void {
  const stats = fs.statfsSync(dir);
  const free = stats.bavail * stats.bsize;
  if (free < minFreeBytes) {
    throw new InsufficientStorageError(`The disk holding PLINTH_DATA_DIR is full (${free} bytes free); writes are refused until space is freed.`);
  }
}
