import type { OperatorActor } from '../operators/operator-auth';
import type { OperatorRecord, OperatorSessionRecord } from '../store/operator-store';

/** An operator as the API shows it: never the password hash or the TOTP secret. */
export function operatorView(o: OperatorRecord): { id: string; email: string; role: string; status: string; totp: boolean; created_at: string } {
  return { id: o.id, email: o.email, role: o.role, status: o.status, totp: o.totp_secret !== null, created_at: o.created_at };
}

/** A session as the API shows it: never its token or the token's hash. */
export function sessionView(s: OperatorSessionRecord, current?: OperatorActor) {
  return {
    id: s.id,
    operator_id: s.operator_id,
    created_at: s.created_at,
    expires_at: s.expires_at,
    max_expires_at: s.max_expires_at,
    address: s.address,
    current: current?.kind === 'operator' && current.session.id === s.id,
  };
}
