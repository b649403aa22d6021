import { Router, type RequestHandler } from 'express';
import Joi from 'joi';
import { requestContext, requireSecretKey, unstorableJsonReason } from '@plinth/shared';
import { userClaimsSchema } from '../domain/claims';
import { displayNameSchema, emailSchema, passwordSchema, photoUrlSchema, validate } from '../domain/validation';
import type { AuthContext } from '../flows/auth-context';
import * as admin from '../flows/admin-users';
import { sendResetTo } from '../flows/verification';
import { secretKeyRequester } from './requester';

const MAX_METADATA_BYTES = 16 * 1024;

const metadataSchema = Joi.object()
  .unknown(true)
  .custom((v: object, helpers) => {
    if (Buffer.byteLength(JSON.stringify(v)) > MAX_METADATA_BYTES) return helpers.message({ custom: 'must be at most 16384 bytes of JSON' });
    // Shapes MongoDB cannot keep as given are refused on every store alike.
    const why = unstorableJsonReason(v);
    return why ? helpers.message({ custom: why }) : v;
  });

const schemas = {
  list: Joi.object({
    search: Joi.string().trim().max(254).allow(''),
    limit: Joi.number().integer().min(1).max(1000).default(50),
    offset: Joi.number().integer().min(0).default(0),
    anonymous: Joi.boolean(),
  }),
  create: Joi.object({
    email: emailSchema.required(),
    password: passwordSchema,
    display_name: displayNameSchema,
    email_verified: Joi.boolean().strict(),
  }),
  patch: Joi.object({
    status: Joi.string().valid('active', 'disabled'),
    display_name: displayNameSchema.allow(null),
    photo_url: photoUrlSchema.allow(null),
    email_verified: Joi.boolean().strict(),
    metadata: metadataSchema,
    claims: userClaimsSchema,
  })
    .min(1)
    .messages({ 'object.min': 'must change at least one field' }),
};

const secretOnly: RequestHandler = (_req, res, next) => {
  requireSecretKey(res);
  next();
};

/** The admin endpoints of Auth (secret key), relative to `/v1/projects/:project/auth`. */
export function adminRoutes(ctx: AuthContext): Router {
  const r = Router();
  r.use('/users', secretOnly);

  r.get('/users', async (req, res) => {
    const q = validate(schemas.list, req.query);
    res.json(await admin.listUsers(ctx, requestContext(res).project, { ...q, search: q.search || undefined }));
  });

  r.post('/users', async (req, res) => {
    const body = validate(schemas.create, req.body);
    res.status(201).json({ user: await admin.createUser(ctx, requestContext(res).project, body, secretKeyRequester(res)) });
  });

  r.get('/users/:id', async (req, res) => {
    res.json({ user: await admin.getUser(ctx, requestContext(res).project, String(req.params.id)) });
  });

  r.patch('/users/:id', async (req, res) => {
    const patch = validate(schemas.patch, req.body);
    res.json({ user: await admin.patchUser(ctx, requestContext(res).project, String(req.params.id), patch) });
  });

  r.delete('/users/:id', async (req, res) => {
    await admin.deleteUser(ctx, requestContext(res).project, String(req.params.id));
    res.json({ deleted: true });
  });

  r.post('/users/:id/revoke-sessions', async (req, res) => {
    await admin.revokeSessions(ctx, requestContext(res).project, String(req.params.id));
    res.json({ revoked: true });
  });

  r.post('/users/:id/send-reset', async (req, res) => {
    await sendResetTo(ctx, requestContext(res).project, String(req.params.id));
    res.json({ sent: true });
  });

  return r;
}
