import type { JsonValue, ProjectId } from '@plinth/shared';
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

/**
 * A user token for an application whose users live elsewhere (contract §4, DESIGN.md §7).
 * It has no `sid`: it belongs to no Auth session and is only refused once it expires.
 */
export async function mintToken(ctx: AuthContext, project: ProjectId, req: MintRequest): Promise<MintedToken> {
  const signed = await ctx.tokens.sign(project, { sub: req.user_id, extra: req.claims }, req.expires_in);
  return {
    access_token: signed.token,
    token_type: 'Bearer',
    expires_at: new Date(signed.exp * 1000).toISOString(),
    expires_in: signed.exp - signed.iat,
  };
}
