import { domainToASCII } from 'node:url';

/**
 * The one form of an e-mail address Plinth stores, compares and rate-limits by: trimmed,
 * Unicode NFC, lower-cased, and the domain converted to punycode (`bücher.de` →
 * `xn--bcher-kva.de`). Two spellings of one address (NFC/NFD, upper/lower case, Unicode or
 * punycode domain) normalise alike, so they can never be two accounts. Returns null when the
 * domain cannot be converted (no `@`, empty parts, an invalid IDN).
 */
export function normalizeEmail(raw: string): string | null {
  const email = raw.trim().normalize('NFC');
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1) return null;
  const local = email.slice(0, at).toLowerCase();
  const domain = domainToASCII(email.slice(at + 1).toLowerCase());
  if (domain === '') return null;
  return `${local}@${domain}`;
}
