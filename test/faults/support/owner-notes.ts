/**
 * What the session fault suites share: a `notes` collection each user reads only their own
 * records of, users signed up with a password, and reads of a note with a user's token — the
 * check that a session still works on records (or, signed out, is refused).
 */
import { projectCall, type ProjectAccess, type SessionBody } from '../../e2e/support/api';

export const OWNER_PASSWORD = 'correct horse 1';

/** Creates the owner-only `notes` collection (Auth already enabled). */
export async function createOwnerNotes(p: ProjectAccess): Promise<void> {
  const notes = await projectCall(p, 'POST', '/collections', {
    key: p.secretKey,
    body: { name: 'notes', fields: { owner: { type: 'text', required: true } }, rules: { read: 'auth != null && record.owner == auth.uid' } },
  });
  expect(notes.status).toBe(201);
}

export function ownerNotes(p: () => ProjectAccess) {
  return {
    /** Signs `email` up (201) and answers its session. */
    signUp: async (email: string): Promise<SessionBody> => {
      const res = await projectCall<SessionBody>(p(), 'POST', '/auth/signup', { key: p().publicKey, body: { email, password: OWNER_PASSWORD } });
      expect(res.status).toBe(201);
      return res.body;
    },
    /** Stores a note owned by `userId` (secret key) and answers its id. */
    noteOf: async (userId: string): Promise<string> => {
      const res = await projectCall<{ record: { id: string } }>(p(), 'POST', '/collections/notes/records', { key: p().secretKey, body: { data: { owner: userId } } });
      expect(res.status).toBe(201);
      return res.body.record.id;
    },
    /** Reads note `id` with the public key and a user's access token. */
    read: (id: string, token: string) => projectCall<{ error?: string }>(p(), 'GET', `/collections/notes/records/${id}`, { key: p().publicKey, dbUserToken: token }),
  };
}
