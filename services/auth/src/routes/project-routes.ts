import { Router } from 'express';
import Joi from 'joi';
import { requestContext, requireSecretKey, type JsonValue } from '@plinth/shared';
import { authSettingsPatchSchema } from '../domain/auth-settings';
import { validate } from '../domain/validation';
import type { AuthContext } from '../flows/auth-context';
import { mintToken, revokeMinted } from '../flows/mint-token';
import { publicSettings } from '../flows/settings';
import { RESERVED_CLAIMS } from '../tokens/access-tokens';
import { requireProjectKey } from './guards';

const MAX_CLAIMS_BYTES = 1000;

const mintSchema = Joi.object<{ user_id: string; claims?: { [claim: string]: JsonValue }; expires_in: number }>({
  user_id: Joi.string().min(1).max(128).required(),
  claims: Joi.object()
    .unknown(true)
    .custom((v: object, helpers) => {
      // Names of Object.prototype (constructor, toString, __proto__…) would be read as the
      // prototype's members by code that looks claims up by name: refused like reserved names.
      const reserved = Object.keys(v).filter((k) => RESERVED_CLAIMS.has(k) || k in Object.prototype);
      if (reserved.length > 0) return helpers.message({ custom: `must not use reserved names: ${reserved.join(', ')}` });
      if (Buffer.byteLength(JSON.stringify(v)) > MAX_CLAIMS_BYTES) return helpers.message({ custom: 'must be at most 1000 bytes of JSON' });
      return v;
    }),
  expires_in: Joi.number().integer().strict().min(60).max(86_400).default(3600),
});

const revokeMintedSchema = Joi.object<{ user_id?: string; sid?: string }>({
  user_id: Joi.string().min(1).max(128),
  sid: Joi.string().min(1).max(128),
})
  .xor('user_id', 'sid')
  .messages({ 'object.missing': 'must name user_id or sid', 'object.xor': 'must name user_id or sid, not both' });

/**
 * Endpoints that work whether or not Auth is enabled: settings, minting, JWKS, key rotation.
 * Full paths under `/v1/projects/:project`.
 */
export function projectRoutes(ctx: AuthContext): Router {
  const r = Router();
  const base = '/v1/projects/:project';

  r.get(`${base}/auth/jwks.json`, async (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300');
    res.json(await ctx.keys.jwks(requestContext(res).project));
  });

  r.post(`${base}/auth/tokens`, requireProjectKey, async (req, res) => {
    const { project } = requireSecretKey(res);
    const body = validate(mintSchema, req.body);
    res.json(await mintToken(ctx, project, body));
  });

  r.post(`${base}/auth/tokens/revoke`, requireProjectKey, async (req, res) => {
    const { project } = requireSecretKey(res);
    const body = validate(revokeMintedSchema, req.body);
    res.json({ revoked: await revokeMinted(ctx, project, body) });
  });

  r.post(`${base}/auth/keys/rotate`, requireProjectKey, async (_req, res) => {
    const { project } = requireSecretKey(res);
    const key = await ctx.keys.rotate(project);
    res.json({ rotated: true, kid: key.kid });
  });

  r.get(`${base}/settings/auth`, requireProjectKey, async (_req, res) => {
    const { project } = requireSecretKey(res);
    res.json(publicSettings(await ctx.settings.get(project)));
  });

  r.patch(`${base}/settings/auth`, requireProjectKey, async (req, res) => {
    const { project } = requireSecretKey(res);
    const patch = validate(authSettingsPatchSchema, req.body);
    // ?dry_run=true: the same checks and answer, nothing stored (`plinth apply` checks first).
    const dryRun = req.query.dry_run === 'true';
    res.json(publicSettings(await ctx.settings.patch(project, patch, dryRun)));
  });

  return r;
}
