import { Router } from 'express';
import Joi from 'joi';
import { requestContext } from '@plinth/shared';
import { toPublicUser } from '../domain/public-user';
import { displayNameSchema, emailSchema, passwordSchema, validate } from '../domain/validation';
import { endEverySession } from '../flows/address-claims';
import type { AuthContext } from '../flows/auth-context';
import { refreshSession, signOut, userFromAccessToken } from '../flows/sessions';
import { redeemOtp, requestOtp, signIn, signUp } from '../flows/sign-in';
import { confirmVerification, forgotPassword, resetPassword, sendVerification } from '../flows/verification';
import { accessTokenOf } from './guards';
import { clientAddress, type RateLimits } from './rate-limits';
import { anonymousRequester, hashingAdmission } from './requester';

const refreshTokenSchema = Joi.string().max(200).required();
const linkTokenSchema = Joi.string().max(200).required();

const schemas = {
  signup: Joi.object({ email: emailSchema.required(), password: passwordSchema.required(), display_name: displayNameSchema }),
  signin: Joi.object({ email: emailSchema.required(), password: Joi.string().max(1024).required() }),
  email: Joi.object({ email: emailSchema.required() }),
  redeem: Joi.object({
    email: emailSchema.required(),
    code: Joi.string().pattern(/^\d{6}$/).required().messages({ 'string.pattern.base': 'must be 6 digits' }),
  }),
  refresh: Joi.object({ refresh_token: refreshTokenSchema }),
  /** A link confirmation; `password` (or a user token in the header) shows the confirmer also holds the account. */
  confirm: Joi.object({ token: linkTokenSchema, password: Joi.string().max(1024) }),
  reset: Joi.object({ token: linkTokenSchema, password: passwordSchema.required() }),
};

/** The client endpoints of Auth (contract §4, public key), relative to `/v1/projects/:project/auth`. */
export function clientRoutes(ctx: AuthContext, rateLimits: RateLimits): Router {
  const r = Router();
  const limits = rateLimits.endpoints;
  const admitted = hashingAdmission(ctx.passwords);

  r.post('/signup', admitted, ...limits.signup, async (req, res) => {
    const body = validate(schemas.signup, req.body);
    res.status(201).json(await signUp(ctx, requestContext(res).project, body, anonymousRequester(req, res)));
  });

  r.post('/signin', admitted, ...limits.signin, async (req, res) => {
    const body = validate(schemas.signin, req.body);
    const { project } = requestContext(res);
    const by = anonymousRequester(req, res);
    res.json(await rateLimits.signInFailures.guard(project, body.email, () => signIn(ctx, project, body, by)));
  });

  r.post('/otp/request', ...limits['otp-request'], async (req, res) => {
    const { email } = validate(schemas.email, req.body);
    const { project } = requestContext(res);
    const now = ctx.clock();
    res.json({ sent: true });
    ctx.background.run('otp/request', () => requestOtp(ctx, project, email, now));
  });

  r.post('/otp/redeem', ...limits['otp-redeem'], async (req, res) => {
    const body = validate(schemas.redeem, req.body);
    const { project } = requestContext(res);
    res.json(await rateLimits.codeFailures.guard(project, clientAddress(req), body.email, () => redeemOtp(ctx, project, body)));
  });

  r.post('/refresh', ...limits.refresh, async (req, res) => {
    const { refresh_token } = validate(schemas.refresh, req.body);
    res.json(await refreshSession(ctx, requestContext(res).project, refresh_token));
  });

  r.post('/signout', async (req, res) => {
    const { refresh_token } = validate(schemas.refresh, req.body);
    await signOut(ctx, requestContext(res).project, refresh_token);
    res.json({ signed_out: true });
  });

  r.post('/signout-all', async (req, res) => {
    const { project } = requestContext(res);
    const { user } = await userFromAccessToken(ctx, project, accessTokenOf(req));
    await endEverySession(ctx, project, user.id);
    res.json({ signed_out: true, everywhere: true });
  });

  r.get('/user', async (req, res) => {
    const { user } = await userFromAccessToken(ctx, requestContext(res).project, accessTokenOf(req));
    res.json({ user: toPublicUser(user) });
  });

  r.post('/verify/request', async (req, res) => {
    const { project } = requestContext(res);
    const { user } = await userFromAccessToken(ctx, project, accessTokenOf(req));
    await sendVerification(ctx, project, user);
    res.json({ sent: true });
  });

  r.post('/verify/confirm', ...limits.account, async (req, res) => {
    const { token, password } = validate(schemas.confirm, req.body);
    const { user } = await confirmVerification(ctx, requestContext(res).project, token, { password, accessToken: accessTokenOf(req) }, anonymousRequester(req, res));
    res.json({ verified: true, user });
  });

  r.post('/password/forgot', ...limits.forgot, async (req, res) => {
    const { email } = validate(schemas.email, req.body);
    const { project } = requestContext(res);
    const now = ctx.clock();
    res.json({ sent: true });
    ctx.background.run('password/forgot', () => forgotPassword(ctx, project, email, now));
  });

  r.post('/password/reset', async (req, res) => {
    const { token, password } = validate(schemas.reset, req.body);
    await resetPassword(ctx, requestContext(res).project, token, password, anonymousRequester(req, res));
    res.json({ reset: true });
  });

  return r;
}
