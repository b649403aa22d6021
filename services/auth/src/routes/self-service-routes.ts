import { Router, type Request } from 'express';
import Joi from 'joi';
import { requestContext, type ProjectId } from '@plinth/shared';
import { displayNameSchema, emailSchema, passwordSchema, photoUrlSchema, validate } from '../domain/validation';
import { deleteAnonymousAccount } from '../flows/anonymous';
import type { AuthContext } from '../flows/auth-context';
import { cancelEmailChange, confirmEmailChange, requestEmailChange } from '../flows/email-change';
import type { Proof } from '../flows/proof';
import { reauthenticate } from '../flows/recent-proof';
import { changePassword, deleteOwnAccount, updateProfile } from '../flows/self-service';
import { userFromAccessToken, type SignedIn } from '../flows/sessions';
import type { UserRecord } from '../store/user-store';
import { accessTokenOf } from './guards';
import { clientAddress, type RateLimits } from './rate-limits';
import { anonymousRequester, userRequester } from './requester';

/** A password as presented (not as set): any string up to 1024 characters; over 72 bytes never matches. */
const presentedPassword = Joi.string().max(1024);
const code = Joi.string().pattern(/^\d{6}$/).messages({ 'string.pattern.base': 'must be 6 digits' });
const linkToken = Joi.string().max(200).required();
const proofSchema = Joi.object<Proof>({ password: presentedPassword, code })
  .xor('password', 'code')
  .messages({ 'object.missing': 'must carry password or code', 'object.xor': 'must carry password or code, not both' });

const schemas = {
  password: Joi.object({ current_password: presentedPassword, new_password: passwordSchema.required() }),
  email: Joi.object({ new_email: emailSchema.required(), password: presentedPassword }),
  confirm: Joi.object({ token: linkToken, password: presentedPassword }),
  cancel: Joi.object({ token: linkToken }),
  profile: Joi.object({ display_name: displayNameSchema.allow(null), photo_url: photoUrlSchema.allow(null) })
    .min(1)
    .messages({ 'object.min': 'must change at least one field' }),
  proof: proofSchema,
  /** An anonymous user's proof, when its sign-in is older than the window: the session's refresh token. */
  anonymousProof: Joi.object({ refresh_token: Joi.string().max(200) }),
};

/**
 * A signed-in user's own account (access token in X-Auth-User-Token), relative to
 * `/v1/projects/:project/auth`: reauthenticate, change password, change e-mail, profile, delete;
 * and the e-mail change's confirm and cancel links. A wrong proof (current password or code) is
 * 403; wrong passwords count toward the e-mail's sign-in failure budget, wrong codes toward the
 * (client address, e-mail) pair's.
 */
export function selfServiceRoutes(ctx: AuthContext, rateLimits: RateLimits): Router {
  const r = Router();
  const limited = rateLimits.endpoints.account;
  const me = (req: Request, project: ProjectId): Promise<SignedIn> => userFromAccessToken(ctx, project, accessTokenOf(req));
  const proving = <T>(req: Request, project: ProjectId, user: UserRecord, proof: Proof, work: () => Promise<T>): Promise<T> =>
    proof.code !== undefined
      ? rateLimits.codeFailures.guard(project, clientAddress(req), user.email ?? user.id, work)
      : rateLimits.signInFailures.guard(project, user.email ?? user.id, work);

  r.post('/reauthenticate', ...limited, async (req, res) => {
    const { project } = requestContext(res);
    const caller = await me(req, project);
    const proof = validate(schemas.proof, req.body);
    res.json(await proving(req, project, caller.user, proof, () => reauthenticate(ctx, project, caller, proof, userRequester(caller.user.id, res))));
  });

  r.post('/password/change', ...limited, async (req, res) => {
    const { project } = requestContext(res);
    const caller = await me(req, project);
    const body = validate(schemas.password, req.body);
    res.json(await proving(req, project, caller.user, {}, () => changePassword(ctx, project, caller, body, userRequester(caller.user.id, res))));
  });

  r.post('/email/change', ...limited, async (req, res) => {
    const { project } = requestContext(res);
    const caller = await me(req, project);
    const body = validate(schemas.email, req.body);
    await proving(req, project, caller.user, {}, () => requestEmailChange(ctx, project, caller, body, userRequester(caller.user.id, res)));
    res.json({ sent: true });
  });

  r.post('/email/confirm', ...limited, async (req, res) => {
    const { token, password } = validate(schemas.confirm, req.body);
    const { user } = await confirmEmailChange(ctx, requestContext(res).project, token, { password, accessToken: accessTokenOf(req) }, anonymousRequester(req, res));
    res.json({ changed: true, user });
  });

  r.post('/email/cancel', async (req, res) => {
    const { token } = validate(schemas.cancel, req.body);
    await cancelEmailChange(ctx, requestContext(res).project, token);
    res.json({ cancelled: true });
  });

  r.patch('/user', async (req, res) => {
    const { project } = requestContext(res);
    const { user } = await me(req, project);
    const patch = validate(schemas.profile, req.body);
    res.json({ user: await updateProfile(ctx, project, user, patch) });
  });

  r.delete('/user', ...limited, async (req, res) => {
    const { project } = requestContext(res);
    const caller = await me(req, project);
    if (caller.user.is_anonymous) {
      const { refresh_token } = validate(schemas.anonymousProof, req.body ?? {});
      await deleteAnonymousAccount(ctx, project, caller, refresh_token);
      res.json({ deleted: true });
      return;
    }
    const { user } = caller;
    const proof = validate(schemas.proof, req.body);
    await proving(req, project, user, proof, () => deleteOwnAccount(ctx, project, user, proof, userRequester(user.id, res)));
    res.json({ deleted: true });
  });

  return r;
}
