/**
 * Thumbnails made on first request (docs/files.md "Thumbnails") with sharp, stored beside the
 * original and served from storage afterwards. Bounded: at most `concurrency` are made at once
 * and `maxWaiting` wait (past that, 503 at once); a source whose header declares more than
 * `maxInputPixels` pixels (a decompression bomb: a few KB that would decode to gigabytes) is
 * refused with 400 before it is decoded.
 */
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InvalidRequestError, OverloadedError } from '@plinth/shared';
import type { ThumbSpec } from './file-field';
import type { FileKey, FileStorage, StoredObject } from './storage/file-storage';

/** Types thumbnails are made of; a thumb of anything else is the original file. */
export const THUMBNAIL_SOURCES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif']);
export const DEFAULT_MAX_INPUT_PIXELS = 40_000_000;
const MAX_THUMB_BYTES = 32 * 1024 * 1024;

/** sharp (and its native library) loads with the first thumbnail, not with every server process. */
const loadSharp = (): typeof import('sharp').default => require('sharp') as typeof import('sharp').default;

export interface ThumbnailerOptions {
  concurrency?: number;
  maxWaiting?: number;
  maxInputPixels?: number;
}

/** The type a thumbnail of `source` is stored as (GIF → PNG: first frame only). */
export function thumbType(source: string): string {
  return source === 'image/gif' ? 'image/png' : source;
}

export class Thumbnailer {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly inFlight = new Map<string, Promise<StoredObject>>();
  private readonly concurrency: number;
  private readonly maxWaiting: number;
  private readonly maxInputPixels: number;

  constructor(
    private readonly storage: FileStorage,
    opts: ThumbnailerOptions = {},
  ) {
    this.concurrency = opts.concurrency ?? 2;
    this.maxWaiting = opts.maxWaiting ?? 32;
    this.maxInputPixels = opts.maxInputPixels ?? DEFAULT_MAX_INPUT_PIXELS;
  }

  /** Makes and stores the thumbnail of `source` at `target` unless it is stored already; one make per target at a time. */
  async ensure(source: FileKey, sourceType: string, target: FileKey, spec: ThumbSpec): Promise<void> {
    if (await this.storage.stat(target)) return;
    let made = this.inFlight.get(target);
    if (!made) {
      made = this.admitted(() => this.make(source, sourceType, target, spec)).finally(() => this.inFlight.delete(target));
      this.inFlight.set(target, made);
    }
    await made;
  }

  private async admitted<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.maxWaiting) throw new OverloadedError(1, 'Too many thumbnails are being made; try again shortly.');
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.running++;
    try {
      return await work();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  private async make(source: FileKey, sourceType: string, target: FileKey, spec: ThumbSpec): Promise<StoredObject> {
    if (!THUMBNAIL_SOURCES.has(sourceType)) throw new InvalidRequestError('Thumbnails are made of PNG, JPEG, GIF, WebP and AVIF images only.');
    const input = await this.storage.get(source);
    if (!input) throw new InvalidRequestError('The file has no bytes to make a thumbnail of.');
    let resizer = loadSharp()({ limitInputPixels: this.maxInputPixels, failOn: 'error', sequentialRead: true, animated: false }).rotate();
    const fit = spec.mode === 'fit' ? 'inside' : 'cover';
    const position = spec.mode === 'top' ? 'top' : spec.mode === 'bottom' ? 'bottom' : 'centre';
    resizer = resizer.resize({ width: spec.width || undefined, height: spec.height || undefined, fit, position, withoutEnlargement: true });
    const out = thumbType(sourceType);
    resizer = out === 'image/png' ? resizer.png() : out === 'image/jpeg' ? resizer.jpeg({ quality: 80 }) : out === 'image/webp' ? resizer.webp() : resizer.avif();
    const output = new PassThrough();
    let decodeError: Error | null = null;
    const feeding = pipeline(input, resizer, output).catch((err: Error) => {
      decodeError = err;
      output.destroy(err);
    });
    try {
      const stored = await this.storage.put(target, output, { maxBytes: MAX_THUMB_BYTES });
      await feeding;
      return stored;
    } catch (err) {
      await feeding;
      const e = decodeError ?? (err as Error);
      if (/pixel limit/i.test(e.message)) {
        throw new InvalidRequestError(`The image is larger than the thumbnail pixel limit of ${this.maxInputPixels} pixels.`);
      }
      if (/unsupported image format|corrupt|bad seek|Input buffer|premature end|VipsJpeg|pngload|read error/i.test(e.message)) {
        throw new InvalidRequestError('The image is corrupt: no thumbnail can be made of it.');
      }
      throw e;
    }
  }
}
