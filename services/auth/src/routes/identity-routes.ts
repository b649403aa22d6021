import { Router } from 'express';
import Joi from 'joi';
import { requestContext, requireSecretKey } from '@plinth/shared';
import { validate } from '../domain/validation';
import { PROVIDER_NAME } from '../domain/oauth-providers';
import * as admin from '../flows/admin-users';
import type { AuthContext } from '../flows/auth-context';
import { linkTicket, listIdentities, unlinkIdentity } from '../flows/identities';
import { exchangeOAuthCode } from '../flows/oauth-sign-in';
import { userFromAccessToken } from '../flows/sessions';
import { accessTokenOf } from './guards';
import type { RateLimits } from './rate-limits';

const schemas = {
  exchange: Joi.object({ code: Joi.string().max(200).required() }),
  link: Joi.object({ redirect_to: Joi.string().max(2048).required() }),
  provider: Joi.object({ provider: Joi.string().pattern(PROVIDER_NAME).required() }),
};

/**
 * Provider sign-in endpoints that take a project key, relative to `/v1/projects/:project/auth`
 * (docs/auth.md "Sign-in with a provider", "Linked identities"): the exchange, explicit linking,
 * the signed-in user's identities, and a user's identities for the secret key.
 */
export function identityRoutes(ctx: AuthContext, rateLimits: RateLimits): Router {
  const r = Router();

  r.post('/oauth/exchange', ...rateLimits.endpoints.oauth, async (req, res) => {
    const { code } = validate(schemas.exchange, req.body);
    res.json(await exchangeOAuthCode(ctx, requestContext(res).project, code));
  });

  r.post('/oauth/:provider/link', ...rateLimits.endpoints.oauth, async (req, res) => {
    const { project } = requestContext(res);
    const { user } = await userFromAccessToken(ctx, project, accessTokenOf(req));
    const { provider } = validate(schemas.provider, { provider: req.params.provider });
    const { redirect_to } = validate(schemas.link, req.body);
    res.json(await linkTicket(ctx, project, user, provider, redirect_to));
  });

  r.get('/identities', async (req, res) => {
    const { project } = requestContext(res);
    const { user } = await userFromAccessToken(ctx, project, accessTokenOf(req));
    res.json({ identities: await listIdentities(ctx, project, user.id) });
  });

  r.delete('/identities/:provider', async (req, res) => {
    const { project } = requestContext(res);
    const { user } = await userFromAccessToken(ctx, project, accessTokenOf(req));
    await unlinkIdentity(ctx, project, user, validate(schemas.provider, { provider: req.params.provider }).provider);
    res.json({ unlinked: true });
  });

  r.get('/users/:id/identities', async (req, res) => {
    const { project } = requireSecretKey(res);
    const user = await admin.getUser(ctx, project, String(req.params.id));
    res.json({ identities: await listIdentities(ctx, project, user.id) });
  });

  return r;
}
