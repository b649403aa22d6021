import type { Session } from '@plinth/protocol';

/** The user and the session, as the server answers them (the wire types of @plinth/protocol). */
export type { Session, User } from '@plinth/protocol';

export type AuthEvent = 'signed_in' | 'refreshed' | 'signed_out';

export type AuthListener = (event: AuthEvent, session: Session | null) => void;
