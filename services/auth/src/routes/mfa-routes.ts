import { Router, type Request, type RequestHandler } from 'express';
import Joi from 'joi';
import { NotFoundError, requestContext, requireSecretKey, type ProjectId } from '@plinth/shared';
import { validate } from '../domain/validation';
import type { AuthContext } from '../flows/auth-context';
import { confirmTotp, enrollTotp, listFactors, resetFactors, unenrollTotp, verifyChallenge, type CodeBudget, type SecondFactor } from '../flows/mfa';
import { userFromAccessToken } from '../flows/sessions';
import { accessTokenOf } from './guards';
import { clientAddress, type RateLimits } from './rate-limits';

const totpCode = Joi.string().pattern(/^\d{6}$/).messages({ 'string.pattern.base': 'must be 6 digits' });
const recoveryCode = Joi.string().max(64);
const secondFactor = { code: totpCode, recovery_code: recoveryCode };
const oneFactor = { 'object.missing': 'must carry code or recovery_code', 'object.xor': 'must carry code or recovery_code, not both' };

const schemas = {
  verify: Joi.object<SecondFactor & { challenge: string }>({ challenge: Joi.string().max(200).required(), ...secondFactor })
    .xor('code', 'recovery_code')
    .messages(oneFactor),
  confirm: Joi.object<{ code: string }>({ code: totpCode.required() }),
  unenroll: Joi.object<SecondFactor>(secondFactor).oxor('code', 'recovery_code').messages(oneFactor),
};

const secretOnly: RequestHandler = (_req, res, next) => {
  requireSecretKey(res);
  next();
};

/**
 * Two-factor sign-in (docs/auth.md "Two-factor sign-in"), relative to `/v1/projects/:project/auth`:
 * the second step of a sign-in (`/mfa/verify`, public key), the signed-in user's own factor
 * (`/mfa`, `/mfa/totp/…`, user token), and the admin's view and reset (`/users/{id}/mfa`,
 * secret key). Wrong codes count per (client address, user) with the e-mail codes' budget.
 */
export function mfaRoutes(ctx: AuthContext, rateLimits: RateLimits): Router {
  const r = Router();
  const budget = (req: Request, project: ProjectId): CodeBudget => (userId, attempt) =>
    rateLimits.codeFailures.guard(project, clientAddress(req), `mfa:${userId}`, attempt);

  r.post('/mfa/verify', ...rateLimits.endpoints.mfa, async (req, res) => {
    const body = validate(schemas.verify, req.body);
    const { project } = requestContext(res);
    res.json(await verifyChallenge(ctx, project, body, budget(req, project)));
  });

  r.get('/mfa', async (req, res) => {
    const { project } = requestContext(res);
    const { user } = await userFromAccessToken(ctx, project, accessTokenOf(req));
    res.json(await listFactors(ctx, project, user.id));
  });

  r.post('/mfa/totp/enroll', ...rateLimits.endpoints.account, async (req, res) => {
    const { project } = requestContext(res);
    const caller = await userFromAccessToken(ctx, project, accessTokenOf(req));
    res.json(await enrollTotp(ctx, project, caller));
  });

  r.post('/mfa/totp/confirm', ...rateLimits.endpoints.account, async (req, res) => {
    const { project } = requestContext(res);
    const caller = await userFromAccessToken(ctx, project, accessTokenOf(req));
    const { code } = validate(schemas.confirm, req.body);
    res.json(await budget(req, project)(caller.user.id, () => confirmTotp(ctx, project, caller, code)));
  });

  r.delete('/mfa/totp', ...rateLimits.endpoints.account, async (req, res) => {
    const { project } = requestContext(res);
    const caller = await userFromAccessToken(ctx, project, accessTokenOf(req));
    const given = validate(schemas.unenroll, req.body ?? {});
    await budget(req, project)(caller.user.id, () => unenrollTotp(ctx, project, caller, given));
    res.json({ unenrolled: true });
  });

  r.get('/users/:id/mfa', secretOnly, async (req, res) => {
    const { project } = requestContext(res);
    const id = String(req.params.id);
    if (!(await ctx.users.getUser(project, id))) throw new NotFoundError('No such user.');
    res.json(await listFactors(ctx, project, id));
  });

  r.delete('/users/:id/mfa', secretOnly, async (req, res) => {
    await resetFactors(ctx, requestContext(res).project, String(req.params.id));
    res.json({ reset: true });
  });

  return r;
}
