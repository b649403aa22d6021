/**
 * The name a file is stored and downloaded under: the client's name reduced to a safe stem,
 * a random suffix and an extension from the detected type (`holiday_photo_k3v9x2m4pq.jpg`).
 * Nothing of a client path survives: no separators, dots or control characters.
 */
import { randomBytes } from 'node:crypto';
import { extensionOf } from './sniff';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const MAX_STEM = 40;

function suffix(): string {
  const bytes = randomBytes(10);
  let out = '';
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}

/** The stem of a client-supplied name: its last path segment, without extension, as `[a-z0-9_]`. */
export function safeStem(original: string): string {
  const last = original.split(/[\\/]/).pop() ?? '';
  const withoutExt = last.includes('.') ? last.slice(0, last.lastIndexOf('.')) : last;
  const stem = withoutExt
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, MAX_STEM);
  return stem || 'file';
}

export function storedName(original: string, type: string): string {
  return `${safeStem(original)}_${suffix()}.${extensionOf(type)}`;
}

/** What stored names look like: a download naming anything else is refused before any lookup. */
export const STORED_NAME = /^[a-z0-9_]{1,40}_[a-z0-9]{10}\.[a-z0-9]{1,5}$/;
