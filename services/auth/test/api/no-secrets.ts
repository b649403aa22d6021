import type { AuthTestService } from './auth-test-service';

/** Paths in `value` that hold a password, a bcrypt hash or a key named like a password. */
export function findSecrets(value: unknown, passwords: ReadonlySet<string>, at = '$'): string[] {
  if (typeof value === 'string') {
    const hits: string[] = [];
    if (/\$2[aby]?\$/.test(value)) hits.push(`${at}: bcrypt hash`);
    for (const p of passwords) if (value.includes(p)) hits.push(`${at}: a password sent by the test`);
    return hits;
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => findSecrets(v, passwords, `${at}[${i}]`));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => [
      ...(k !== 'has_password' && /pass|pwd|hash/i.test(k) ? [`${at}.${k}: key named like a password`] : []),
      ...findSecrets(v, passwords, `${at}.${k}`),
    ]);
  }
  return [];
}

/**
 * Registers, as the last test of a file, the scan of every response body the file received
 * and every line the service logged: no password sent, no `$2` hash, no password-like key.
 */
export function itLeakedNoSecrets(t: AuthTestService): void {
  it('no response body or log line contained a password or a hash of one', () => {
    expect(t.responses.length).toBeGreaterThan(0);
    expect(t.passwordsSent.size).toBeGreaterThan(0);
    expect(findSecrets(t.responses, t.passwordsSent)).toEqual([]);
    expect(findSecrets(t.logLines, t.passwordsSent)).toEqual([]);
  });
}
