import { INLINE_TYPES, sniffType, typeAllowed } from '../../src/files/sniff';

const b = (...parts: Array<string | number[]>): Buffer => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

describe('sniffType reads the type from the bytes', () => {
  it.each([
    ['image/png', b([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'rest')],
    ['image/jpeg', b([0xff, 0xd8, 0xff, 0xe0], 'JFIF')],
    ['image/gif', b('GIF89a', [1, 0, 1, 0])],
    ['image/webp', b('RIFF', [0, 0, 0, 0], 'WEBPVP8 ')],
    ['application/pdf', b('%PDF-1.7\n')],
    ['video/mp4', b([0, 0, 0, 0x18], 'ftypisom', [0, 0, 0, 0])],
    ['image/avif', b([0, 0, 0, 0x1c], 'ftypavif')],
    ['video/webm', b([0x1a, 0x45, 0xdf, 0xa3])],
    ['application/zip', b('PK', [3, 4])],
    ['text/html', b('<!DOCTYPE html><p>hi')],
    ['text/html', b([0xef, 0xbb, 0xbf], '  <script>alert(1)</script>')],
    ['text/html', b('just text then <iframe src=x>')],
    ['image/svg+xml', b('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')],
    ['application/json', b('{"a": 1}')],
    ['text/plain', b('hello world')],
    ['application/octet-stream', b([0, 1, 2, 3, 0xfe])],
    ['application/octet-stream', b([])],
  ])('%s', (type, bytes) => {
    expect(sniffType(bytes)).toBe(type);
  });

  it('never serves markup that can run script inline', () => {
    expect(INLINE_TYPES.has('text/html')).toBe(false);
    expect(INLINE_TYPES.has('image/svg+xml')).toBe(false);
  });

  it('matches allowed types exactly or by family', () => {
    expect(typeAllowed('image/png', ['image/*'])).toBe(true);
    expect(typeAllowed('text/html', ['image/*'])).toBe(false);
    expect(typeAllowed('text/html', ['image/png'])).toBe(false);
    expect(typeAllowed('text/html', [])).toBe(true);
  });
});
