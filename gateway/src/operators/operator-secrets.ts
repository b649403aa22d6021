import { SecretSealer } from '@plinth/shared';

/** A TOTP secret as an authenticator app takes it: base32 (RFC 4648), what enrolment hands out. */
const CLEAR_SECRET = /^[A-Z2-7]+=*$/;

/**
 * Operators' TOTP secrets at rest (the `totp_secret` and `totp_pending` of an operator): sealed
 * with AES-256-GCM under a key derived from PLINTH_INTERNAL_SECRET (standalone keeps it in
 * credentials.json), bound to the operator's id, as auth seals its users' secrets. The project
 * store alone does not give anyone an operator's second factor; losing the internal secret makes
 * every enrolled factor unreadable (an owner resets it: DELETE /v1/admin/operators/:id/totp).
 */
export class OperatorSecrets {
  private readonly sealer: SecretSealer;

  constructor(internalSecret: string) {
    this.sealer = new SecretSealer(internalSecret, 'plinth-gateway', 'operator-totp-secret-encryption');
  }

  seal(operatorId: string, secret: string): string {
    return this.sealer.seal(boundTo(operatorId), secret);
  }

  /** The secret, or null when the value was not sealed for this operator with this key. */
  open(operatorId: string, sealed: string): string | null {
    return this.sealer.open(boundTo(operatorId), sealed);
  }

  /**
   * The secret a stored value holds: sealed, or — written by an older release's replica while a
   * rolling update was under way, after the migration sealed the rest — in clear (the caller
   * seals it on its next write). Null when it opens neither way (the key changed).
   */
  read(operatorId: string, stored: string): { secret: string; clear: boolean } | null {
    const opened = this.open(operatorId, stored);
    if (opened !== null) return { secret: opened, clear: false };
    return CLEAR_SECRET.test(stored) ? { secret: stored, clear: true } : null;
  }

  /**
   * What a stored value becomes under sealing (the data-version migration of operator stores):
   * the sealed form of a clear base32 secret, or null when it needs nothing — already sealed for
   * this operator, or unreadable either way (left as it is, and refused at sign-in).
   */
  sealIfClear(operatorId: string, stored: string): string | null {
    if (this.open(operatorId, stored) !== null) return null;
    return CLEAR_SECRET.test(stored) ? this.seal(operatorId, stored) : null;
  }
}

function boundTo(operatorId: string): Buffer {
  return Buffer.from(`operator-totp\n${operatorId}`);
}
