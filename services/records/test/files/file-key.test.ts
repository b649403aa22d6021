import { InvalidRequestError } from '@plinth/shared';
import { fileKey } from '../../src/files/storage/file-storage';

describe('fileKey', () => {
  it.each(['..', '.', '', '../etc', 'a/b', 'a\\b', '.hidden', 'x\u0000y', '%2e%2e', 'é.png', 'a b'])('refuses the segment %j with a 400', (segment) => {
    expect(() => fileKey('p1', 'posts', 'rec_1', segment)).toThrow(InvalidRequestError);
  });
  it('joins safe segments', () => {
    expect(fileKey('p1', 'posts', 'rec_1', 'photo_ab12.png')).toBe('p1/posts/rec_1/photo_ab12.png');
  });
});
