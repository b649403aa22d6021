/**
 * `…/auth/portability/users` and `…/auth/portability/settings` (secret key only; they work
 * whether or not Auth is enabled): what `plinth projects export` and `import` move between
 * deployments (flows/portability.ts). Full paths under `/v1/projects/:project`.
 */
import { Router } from 'express';
import Joi from 'joi';
import { requireSecretKey } from '@plinth/shared';
import { userClaimsSchema } from '../domain/claims';
import { displayNameSchema, emailSchema, photoUrlSchema, validate } from '../domain/validation';
import type { AuthContext } from '../flows/auth-context';
import { exportUsers, importUsers, PORTABLE_USERS_LIMIT, type PortableUser } from '../flows/portability';
import { requireProjectKey } from './guards';

const base = '/v1/projects/:project';
const timestamp = Joi.string().isoDate().max(40);
const epochMs = Joi.number().integer().min(0).max(8.64e15);
/** A bcrypt hash as Plinth stores it ($2a/$2b/$2y, cost 4–31). */
const bcryptHash = Joi.string().pattern(/^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/);

const identitySchema = Joi.object({
  provider: Joi.string().pattern(/^[a-z][a-z0-9-]{0,31}$/).required(),
  subject: Joi.string().min(1).max(256).required(),
  email: Joi.string().max(254).allow(null).required(),
  email_verified: Joi.boolean().strict().required(),
  created_at: timestamp.required(),
});

const factorSchema = Joi.object({
  status: Joi.string().valid('active').required(),
  secret: Joi.string().pattern(/^[A-Z2-7]{16,128}=*$/).required(),
  created_at: epochMs.required(),
  confirmed_at: epochMs.allow(null).required(),
  last_step: Joi.number().integer().min(-1).max(1e12).required(),
  recovery_hashes: Joi.array().items(Joi.string().pattern(/^[0-9a-f]{64}$/)).max(20).required(),
});

const userSchema = Joi.object({
  id: Joi.string().pattern(/^usr_[0-9a-z]{26}$/).required(),
  email: emailSchema.allow(null).required(),
  email_verified: Joi.boolean().strict().required(),
  display_name: displayNameSchema.allow(null).required(),
  photo_url: photoUrlSchema.allow(null).required(),
  status: Joi.string().valid('active', 'disabled').required(),
  password_hash: bcryptHash.allow(null).required(),
  metadata: Joi.object().unknown(true).required(),
  claims: userClaimsSchema.required(),
  is_anonymous: Joi.boolean().strict().required(),
  last_sign_in_at: timestamp.allow(null).required(),
  created_at: timestamp.required(),
  identities: Joi.array().items(identitySchema).max(20).required(),
  mfa: factorSchema.allow(null).required(),
});

const importSchema = Joi.object<{ users: PortableUser[] }>({
  users: Joi.array().items(userSchema).min(1).max(PORTABLE_USERS_LIMIT).required(),
});

const pageSchema = Joi.object<{ offset: number; limit: number }>({
  offset: Joi.number().integer().min(0).max(1e9).default(0),
  limit: Joi.number().integer().min(1).max(PORTABLE_USERS_LIMIT).default(PORTABLE_USERS_LIMIT),
});

export function portabilityRoutes(ctx: AuthContext): Router {
  const r = Router();

  r.get(`${base}/auth/portability/users`, requireProjectKey, async (req, res) => {
    const { project } = requireSecretKey(res);
    const q = validate(pageSchema, req.query);
    res.json(await exportUsers(ctx, project, q.offset, q.limit));
  });

  r.post(`${base}/auth/portability/users`, requireProjectKey, async (req, res) => {
    const { project } = requireSecretKey(res);
    const body = validate(importSchema, req.body);
    res.json(await importUsers(ctx, project, body.users));
  });

  /** The settings with the providers' client secrets, which `GET /settings/auth` never answers. */
  r.get(`${base}/auth/portability/settings`, requireProjectKey, async (_req, res) => {
    const { project } = requireSecretKey(res);
    res.json({ settings: await ctx.settings.get(project) });
  });

  return r;
}
