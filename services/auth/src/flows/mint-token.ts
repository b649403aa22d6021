import { InvalidRequestError, newId, type JsonValue, type ProjectId } from '@plinth/shared';
import { newRefreshToken, sha256 } from '../domain/secrets';
import type { AuthContext } from './auth-context';

export interface MintRequest {
  user_id: string;
  claims?: { [claim: string]: JsonValue };
  expires_in: number;
}

export interface MintedToken {
  access_token: string;
  token_type: 'Bearer';
  expires_at: string;
  expires_in: number;
}

/** Prefix of the `sid` of minted tokens. */
export const MINTED_SID_PREFIX = 'mnt_';

/**
 * Minted tokens are recorded in the session store as sessions of this owner (never a real
 * user id, so revoking them never signs an Auth user out, and they are never valid on Auth's
 * own endpoints): revoking the owner revokes every minted token of the user.
 */
function mintedOwner(userId: string): string {
  return `minted:${userId}`;
}

/**
 * A user token for an application whose users live elsewhere (contract §4). It carries a
 * `sid` (`mnt_…`) recorded in the session store until it expires, so it can be revoked one by
 * one (by sid) or all at once per user_id (revokeMinted); records refuses revoked ones.
 */
export async function mintToken(ctx: AuthContext, project: ProjectId, req: MintRequest): Promise<MintedToken> {
  const sid = newId(MINTED_SID_PREFIX);
  const signed = await ctx.tokens.sign(project, { sub: req.user_id, sid, extra: req.claims }, req.expires_in);
  await ctx.sessions.create(project, {
    id: sid,
    user_id: mintedOwner(req.user_id),
    // A refresh hash nobody holds: minted tokens cannot be refreshed.
    refresh_hash: sha256(newRefreshToken()),
    now: ctx.clock(),
    expires_at: signed.exp * 1000,
  });
  return {
    access_token: signed.token,
    token_type: 'Bearer',
    expires_at: new Date(signed.exp * 1000).toISOString(),
    expires_in: signed.exp - signed.iat,
  };
}

/**
 * Revokes minted tokens: every one minted for `user_id`, or the one whose `sid` is given.
 * Answers how many were live. A sid that is not a minted token's → 400.
 */
export async function revokeMinted(ctx: AuthContext, project: ProjectId, by: { user_id?: string; sid?: string }): Promise<number> {
  const now = ctx.clock();
  if (by.sid !== undefined) {
    if (!by.sid.startsWith(MINTED_SID_PREFIX)) {
      throw new InvalidRequestError('Only minted tokens (sid mnt_…) are revoked here; sign Auth users out with revoke-sessions.', {
        field: 'sid',
      });
    }
    return (await ctx.sessions.revoke(project, by.sid, now)) ? 1 : 0;
  }
  return ctx.sessions.revokeUser(project, mintedOwner(String(by.user_id)), now);
}

/**
 * Ends every token minted for an Auth user's id (a backend may mint for its Auth users): used
 * when the user is disabled or deleted, beside ending its sessions. Returns how many were live.
 */
export async function revokeMintedForUser(ctx: AuthContext, project: ProjectId, userId: string): Promise<number> {
  return ctx.sessions.revokeUser(project, mintedOwner(userId), ctx.clock());
}
