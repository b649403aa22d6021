import { Router } from 'express';
import Joi from 'joi';
import { requestContext } from '@plinth/shared';
import { emailSchema, passwordSchema, validate } from '../domain/validation';
import { signInAnonymously, upgradeAnonymous } from '../flows/anonymous';
import type { AuthContext } from '../flows/auth-context';
import { userFromAccessToken } from '../flows/sessions';
import { accessTokenOf } from './guards';
import type { RateLimits } from './rate-limits';
import { userRequester } from './requester';

const upgradeSchema = Joi.object({
  email: emailSchema.required(),
  password: passwordSchema.required(),
  refresh_token: Joi.string().max(200),
});

/**
 * Anonymous users (docs/auth.md "Anonymous users"), relative to `/v1/projects/:project/auth`:
 * sign in as a new anonymous user (limited per client address), and upgrade the signed-in
 * anonymous user with an address and a password.
 */
export function anonymousRoutes(ctx: AuthContext, rateLimits: RateLimits): Router {
  const r = Router();

  r.post('/anonymous', ...rateLimits.endpoints.anonymous, async (_req, res) => {
    res.status(201).json(await signInAnonymously(ctx, requestContext(res).project));
  });

  r.post('/anonymous/upgrade', ...rateLimits.endpoints.account, async (req, res) => {
    const { project } = requestContext(res);
    const caller = await userFromAccessToken(ctx, project, accessTokenOf(req));
    const body = validate(upgradeSchema, req.body);
    res.json(await upgradeAnonymous(ctx, project, caller, body, userRequester(caller.user.id, res)));
  });

  return r;
}
