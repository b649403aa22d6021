import { newOtpCode, newRefreshToken, openGrace, otpHash, sealGrace, sha256 } from '../src/domain/secrets';

describe('secrets', () => {
  it('refresh tokens are frt_ + 256 random bits', () => {
    const a = newRefreshToken();
    expect(a).toMatch(/^frt_[A-Za-z0-9_-]{43}$/);
    expect(newRefreshToken()).not.toBe(a);
  });

  it('OTP codes are 6 digits', () => {
    for (let i = 0; i < 200; i++) expect(newOtpCode()).toMatch(/^\d{6}$/);
  });

  it('OTP hashes bind the code to the e-mail, case-insensitively', () => {
    expect(otpHash('Ada@x.io', '123456')).toBe(otpHash('ada@x.io', '123456'));
    expect(otpHash('ada@x.io', '123456')).not.toBe(otpHash('bob@x.io', '123456'));
    expect(otpHash('ada@x.io', '123456')).not.toContain('123456');
    expect(sha256('x')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the grace blob opens only with the token it was sealed for', () => {
    const parent = newRefreshToken();
    const child = newRefreshToken();
    const blob = sealGrace(child, parent);
    expect(blob).not.toContain(child);
    expect(openGrace(blob, parent)).toBe(child);
    expect(openGrace(blob, newRefreshToken())).toBeNull();
    expect(openGrace('garbage', parent)).toBeNull();
  });
});
