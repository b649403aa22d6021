import fs from 'node:fs';
import { UsageError } from '../client';

export function need(v: string | undefined, what: string): string {
  if (!v) throw new UsageError(`missing ${what}`);
  return v;
}

export function positiveInt(v: string | undefined, what: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d{1,7}$/.test(v) || Number(v) < 1) throw new UsageError(`${what} must be a positive integer`);
  return Number(v);
}

export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${file} is not JSON: ${(e as Error).message}`);
  }
}
