import { Router, type Request } from 'express';
import Joi from 'joi';
import { requestContext, type ProjectId } from '@plinth/shared';
import { displayNameSchema, emailSchema, passwordSchema, photoUrlSchema, validate } from '../domain/validation';
import type { AuthContext } from '../flows/auth-context';
import { userFromAccessToken } from '../flows/sessions';
import {
  changePassword,
  confirmEmailChange,
  deleteOwnAccount,
  requestEmailChange,
  updateProfile,
  type Proof,
} from '../flows/self-service';
import type { UserRecord } from '../store/user-store';
import { accessTokenOf } from './guards';
import type { RateLimits } from './rate-limits';
import { userRequester } from './requester';

/** A password as presented (not as set): any string up to 1024 characters; over 72 bytes never matches. */
const presentedPassword = Joi.string().max(1024);
const code = Joi.string().pattern(/^\d{6}$/).messages({ 'string.pattern.base': 'must be 6 digits' });

const schemas = {
  password: Joi.object({ current_password: presentedPassword.required(), new_password: passwordSchema.required() }),
  email: Joi.object({ new_email: emailSchema.required(), password: presentedPassword }),
  confirm: Joi.object({ token: Joi.string().max(200).required() }),
  profile: Joi.object({ display_name: displayNameSchema.allow(null), photo_url: photoUrlSchema.allow(null) })
    .min(1)
    .messages({ 'object.min': 'must change at least one field' }),
  remove: Joi.object<Proof>({ password: presentedPassword, code })
    .xor('password', 'code')
    .messages({ 'object.missing': 'must carry password or code', 'object.xor': 'must carry password or code, not both' }),
};

/**
 * A signed-in user's own account (access token in X-Auth-User-Token), relative to
 * `/v1/projects/:project/auth`: change password, change e-mail, profile, delete. A wrong proof
 * (current password or code) is 403 and counts toward the e-mail's sign-in failure budget.
 */
export function selfServiceRoutes(ctx: AuthContext, rateLimits: RateLimits): Router {
  const r = Router();
  const me = async (req: Request, project: ProjectId): Promise<UserRecord> =>
    (await userFromAccessToken(ctx, project, accessTokenOf(req))).user;
  const proving = <T>(project: ProjectId, user: UserRecord, work: () => Promise<T>) =>
    rateLimits.signInFailures.guard(project, user.email, work);

  r.post('/password/change', ...rateLimits.endpoints.account, async (req, res) => {
    const { project } = requestContext(res);
    const user = await me(req, project);
    const body = validate(schemas.password, req.body);
    res.json(await proving(project, user, () => changePassword(ctx, project, user, body, userRequester(user.id, res))));
  });

  r.post('/email/change', ...rateLimits.endpoints.account, async (req, res) => {
    const { project } = requestContext(res);
    const user = await me(req, project);
    const body = validate(schemas.email, req.body);
    await proving(project, user, () => requestEmailChange(ctx, project, user, body, userRequester(user.id, res)));
    res.json({ sent: true });
  });

  r.post('/email/confirm', async (req, res) => {
    const { token } = validate(schemas.confirm, req.body);
    res.json({ changed: true, user: await confirmEmailChange(ctx, requestContext(res).project, token) });
  });

  r.patch('/user', async (req, res) => {
    const { project } = requestContext(res);
    const user = await me(req, project);
    const patch = validate(schemas.profile, req.body);
    res.json({ user: await updateProfile(ctx, project, user, patch) });
  });

  r.delete('/user', ...rateLimits.endpoints.account, async (req, res) => {
    const { project } = requestContext(res);
    const user = await me(req, project);
    const proof = validate(schemas.remove, req.body);
    await proving(project, user, () => deleteOwnAccount(ctx, project, user, proof, userRequester(user.id, res)));
    res.json({ deleted: true });
  });

  return r;
}
