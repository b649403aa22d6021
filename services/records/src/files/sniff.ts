/**
 * The type of a file from its first bytes (magic numbers), never from what the client declared
 * (docs/files.md "Types"). A `file` field's `mime_types` are checked against this, and it is
 * the type a download is served with, so a file declared `image/png` that holds HTML is
 * `text/html` here — refused by an image-only field, and served as an attachment otherwise.
 */

/** How many leading bytes `sniffType` looks at. */
export const SNIFF_BYTES = 4096;

const startsWith = (b: Buffer, sig: number[], at = 0): boolean => sig.every((x, i) => b[at + i] === x);
const ascii = (b: Buffer, text: string, at = 0): boolean => b.length >= at + text.length && b.toString('latin1', at, at + text.length) === text;

/** ISO base media (`ftyp` box): its brand says which. */
function isoType(b: Buffer): string | null {
  if (!ascii(b, 'ftyp', 4)) return null;
  const brand = b.toString('latin1', 8, 12);
  if (brand === 'avif' || brand === 'avis') return 'image/avif';
  if (brand === 'heic' || brand === 'heix' || brand === 'mif1') return 'image/heic';
  if (brand.startsWith('M4A')) return 'audio/mp4';
  if (brand === 'qt  ') return 'video/quicktime';
  return 'video/mp4';
}

/** Markup a browser would render as a document (it sniffs these in text, wherever declared). */
const HTML_MARKERS = /<(!doctype\s+html|html|head|body|script|iframe|object|embed|meta|style|title|a\s|img\s|div|table|br|p[\s>]|h1|form|link|svg|xml|\?xml)/i;

function isUtf8Text(b: Buffer): boolean {
  if (b.includes(0)) return false;
  // A multi-byte character cut at the end of the sniffed prefix is still text.
  const cut = b.length === SNIFF_BYTES ? b.subarray(0, b.length - 4) : b;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(cut);
    return true;
  } catch {
    return false;
  }
}

function textType(b: Buffer): string {
  const text = b.toString('utf8').replace(/^\uFEFF/, '');
  if (/<svg[\s>]/i.test(text)) return 'image/svg+xml';
  if (HTML_MARKERS.test(text)) return 'text/html';
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      JSON.parse(text);
      return 'application/json';
    } catch {
      // Not (all) JSON: plain text.
    }
  }
  return 'text/plain';
}

/** The type of a file whose first bytes (up to SNIFF_BYTES) are `head`. */
export function sniffType(head: Buffer): string {
  const b = head;
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(b, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (ascii(b, 'GIF87a') || ascii(b, 'GIF89a')) return 'image/gif';
  if (ascii(b, 'RIFF') && ascii(b, 'WEBP', 8)) return 'image/webp';
  if (ascii(b, 'RIFF') && ascii(b, 'WAVE', 8)) return 'audio/wav';
  if (startsWith(b, [0x00, 0x00, 0x01, 0x00])) return 'image/x-icon';
  if (ascii(b, 'BM') && b.length > 14) return 'image/bmp';
  if (ascii(b, '%PDF-')) return 'application/pdf';
  const iso = isoType(b);
  if (iso) return iso;
  if (startsWith(b, [0x1a, 0x45, 0xdf, 0xa3])) return 'video/webm';
  if (ascii(b, 'OggS')) return 'audio/ogg';
  if (ascii(b, 'fLaC')) return 'audio/flac';
  if (ascii(b, 'ID3') || (b[0] === 0xff && b.length > 1 && (b[1] & 0xe0) === 0xe0)) return 'audio/mpeg';
  if (startsWith(b, [0x50, 0x4b, 0x03, 0x04]) || startsWith(b, [0x50, 0x4b, 0x05, 0x06])) return 'application/zip';
  if (startsWith(b, [0x1f, 0x8b])) return 'application/gzip';
  if (b.length > 0 && isUtf8Text(b)) return textType(b);
  return 'application/octet-stream';
}

/** The file-name extension stored names get for a type. */
export function extensionOf(type: string): string {
  const known: { [type: string]: string } = {
    'image/png': 'png',
    'image/jpeg': 'jpg',
    'image/gif': 'gif',
    'image/webp': 'webp',
    'image/avif': 'avif',
    'image/heic': 'heic',
    'image/bmp': 'bmp',
    'image/x-icon': 'ico',
    'image/svg+xml': 'svg',
    'application/pdf': 'pdf',
    'video/mp4': 'mp4',
    'video/quicktime': 'mov',
    'video/webm': 'webm',
    'audio/mp4': 'm4a',
    'audio/mpeg': 'mp3',
    'audio/ogg': 'ogg',
    'audio/wav': 'wav',
    'audio/flac': 'flac',
    'application/zip': 'zip',
    'application/gzip': 'gz',
    'application/json': 'json',
    'text/html': 'html',
    'text/plain': 'txt',
  };
  return known[type] ?? 'bin';
}

/**
 * Types served inline (a browser may display them); everything else is served as an
 * attachment. SVG and HTML are never inline: they can run script.
 */
export const INLINE_TYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'image/x-icon',
  'application/pdf',
  'video/mp4',
  'video/webm',
  'video/quicktime',
  'audio/mpeg',
  'audio/ogg',
  'audio/wav',
  'audio/flac',
  'audio/mp4',
]);

/** Whether `type` matches an allowed pattern: exact (`image/png`) or a family (`image/*`). */
export function typeAllowed(type: string, allowed: readonly string[] | undefined): boolean {
  if (!allowed || allowed.length === 0) return true;
  return allowed.some((a) => a === type || (a.endsWith('/*') && type.startsWith(a.slice(0, -1))));
}
