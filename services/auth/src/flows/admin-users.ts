import { NotFoundError, type JsonValue, type ProjectId, type User } from '@plinth/shared';
import { toPublicUser } from '../domain/public-user';
import type { UserPatch, UserRecord } from '../store/user-store';
import { endEverySession } from './address-claims';
import { hashTicket, type AuthContext, type Requester } from './auth-context';
import { revokeMintedForUser } from './mint-token';
import { newUserRecord } from '../domain/new-user';

export interface AdminUserCreate {
  email: string;
  password?: string;
  display_name?: string;
  email_verified?: boolean;
}

export interface AdminUserPatch {
  status?: 'active' | 'disabled';
  display_name?: string | null;
  photo_url?: string | null;
  email_verified?: boolean;
  metadata?: { [key: string]: JsonValue };
  /** Replaces the user's custom claims; they reach access tokens at the next refresh or sign-in. */
  claims?: { [name: string]: JsonValue };
}

async function existing(ctx: AuthContext, project: ProjectId, id: string): Promise<UserRecord> {
  const user = await ctx.users.getUser(project, id);
  if (!user) throw new NotFoundError('No such user.');
  return user;
}

export async function listUsers(
  ctx: AuthContext,
  project: ProjectId,
  q: { search?: string; limit: number; offset: number; anonymous?: boolean },
): Promise<{ users: User[]; total: number; limit: number; offset: number }> {
  const { users, total } = await ctx.users.listUsers(project, q);
  return { users: users.map(toPublicUser), total, limit: q.limit, offset: q.offset };
}

/** Creates a user as the project's admin. Taken e-mail → 409. */
export async function createUser(ctx: AuthContext, project: ProjectId, input: AdminUserCreate, by: Requester): Promise<User> {
  const user = newUserRecord(
    input.email,
    {
      password_hash: input.password === undefined ? null : await ctx.passwords.hash(input.password, hashTicket(project, by)),
      display_name: input.display_name ?? null,
      email_verified: input.email_verified ?? false,
    },
    ctx.clock(),
  );
  await ctx.users.createUser(project, user);
  return toPublicUser(user);
}

export async function getUser(ctx: AuthContext, project: ProjectId, id: string): Promise<User> {
  return toPublicUser(await existing(ctx, project, id));
}

/**
 * Applies an admin patch. Disabling revokes every session of the user (contract §3), its pending
 * e-mail change and every token minted for its id.
 */
export async function patchUser(ctx: AuthContext, project: ProjectId, id: string, patch: AdminUserPatch): Promise<User> {
  const updated = await ctx.users.updateUser(project, id, patch satisfies UserPatch);
  if (!updated) throw new NotFoundError('No such user.');
  if (patch.status === 'disabled') {
    await endEverySession(ctx, project, id);
    await revokeMintedForUser(ctx, project, id);
  }
  return toPublicUser(updated);
}

/** Deletes the identity (freeing the e-mail) after ending its sessions and minted tokens. */
export async function deleteUser(ctx: AuthContext, project: ProjectId, id: string): Promise<void> {
  await existing(ctx, project, id);
  await ctx.sessions.revokeUser(project, id, ctx.clock());
  await revokeMintedForUser(ctx, project, id);
  await ctx.users.deleteUser(project, id);
}

/** Signs the user out everywhere (a pending e-mail change ends too). Unknown user → 404. */
export async function revokeSessions(ctx: AuthContext, project: ProjectId, id: string): Promise<void> {
  await existing(ctx, project, id);
  await endEverySession(ctx, project, id);
}
