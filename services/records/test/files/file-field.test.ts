import { InvalidRequestError } from '@plinth/shared';
import { DEFAULT_MAX_FILE_SIZE, parseFileField, parseThumbSpec } from '../../src/files/file-field';
import { safeStem, STORED_NAME, storedName } from '../../src/files/stored-name';

describe('file field options', () => {
  it('fills defaults', () => {
    expect(parseFileField('a', { type: 'file' })).toEqual({ type: 'file', max_size: DEFAULT_MAX_FILE_SIZE, mime_types: [], max_items: 1, thumbs: [] });
    expect(parseFileField('a', { type: 'files' }).max_items).toBe(10);
  });
  it.each([
    { type: 'file', max_size: 0 },
    { type: 'file', max_size: 3 * 1024 * 1024 * 1024 },
    { type: 'file', max_items: 2 },
    { type: 'files', max_items: 101 },
    { type: 'file', mime_types: ['png'] },
    { type: 'file', mime_types: 'image/png' },
    { type: 'file', thumbs: ['big'] },
    { type: 'file', thumbs: ['0x0'] },
    { type: 'file', thumbs: ['5000x10'] },
    { type: 'file', thumbs: ['0x100f'] },
  ])('refuses %j with a 400', (raw) => {
    expect(() => parseFileField('a', raw)).toThrow(InvalidRequestError);
  });
  it('reads thumb specs as PocketBase spells them', () => {
    expect(parseThumbSpec('100x100')).toEqual({ width: 100, height: 100, mode: 'center' });
    expect(parseThumbSpec('0x300')).toEqual({ width: 0, height: 300, mode: 'center' });
    expect(parseThumbSpec('100x100f')).toEqual({ width: 100, height: 100, mode: 'fit' });
    expect(parseThumbSpec('100x100t')?.mode).toBe('top');
    expect(parseThumbSpec('100x100x')).toBeNull();
  });
});

describe('stored names', () => {
  it('keep nothing of a client path', () => {
    expect(safeStem('../../etc/passwd')).toBe('passwd');
    expect(safeStem('C:\\Users\\me\\Photo (1).JPG')).toBe('photo_1');
    expect(safeStem('.htaccess')).toBe('file');
    expect(safeStem('\u0000\u202e<script>')).toBe('script');
    expect(storedName('../../x.html', 'image/png')).toMatch(STORED_NAME);
    expect(storedName('../../x.html', 'image/png')).toMatch(/^x_[a-z0-9]{10}\.png$/);
  });
});
