import { Router } from 'express';
import Joi from 'joi';
import { ConflictError, InvalidRequestError, NotFoundError, UnauthorizedError, newId } from '@plinth/shared';
import { actorIn, need } from '../operators/admin-auth';
import type { OperatorAuth } from '../operators/operator-auth';
import { newOperatorTotpSecret, operatorTotpStep, operatorTotpUri } from '../operators/totp';
import { OPERATOR_ROLES, type OperatorPatch, type OperatorRecord } from '../store/operator-store';
import { operatorView } from './operator-views';
import { validate } from './validate';

/** bcrypt reads 72 bytes at most: a longer password would be cut silently, so it is refused. */
const password = Joi.string()
  .min(10)
  .max(200)
  .custom((v: string, helpers) => (Buffer.byteLength(v) > 72 ? helpers.error('string.maxBytes') : v))
  .messages({ 'string.maxBytes': '{{#label}} must be at most 72 bytes' });

const createSchema = Joi.object({
  email: Joi.string().trim().lowercase().email({ tlds: false }).max(320).required(),
  password: password.required(),
  role: Joi.string().valid(...OPERATOR_ROLES).required(),
});
const patchSchema = Joi.object({
  role: Joi.string().valid(...OPERATOR_ROLES),
  status: Joi.string().valid('active', 'disabled'),
  password,
}).min(1);
const confirmSchema = Joi.object({ code: Joi.string().trim().max(12).required() });

/** Operators (owner only) and one's own second factor (docs/operators.md "Operators, roles and sessions"). */
export function operatorRoutes(deps: { operators: OperatorAuth }): Router {
  const { operators } = deps;
  const store = operators.store;
  const r = Router();

  const find = async (id: string): Promise<OperatorRecord> => {
    const op = await store.getOperator(String(id));
    if (!op) throw new NotFoundError('Unknown operator.');
    return op;
  };
  /** An owner may not take away the last active owner (they could not get it back without the operator key). */
  const keepAnOwner = async (target: OperatorRecord, next: { role?: string; status?: string } | null): Promise<void> => {
    if (target.role !== 'owner' || target.status !== 'active') return;
    if (next && (next.role ?? 'owner') === 'owner' && (next.status ?? 'active') === 'active') return;
    const owners = (await store.listOperators()).filter((o) => o.role === 'owner' && o.status === 'active');
    if (owners.length <= 1) throw new ConflictError('This is the last active owner; make another owner first.', { reason: 'last_owner' });
  };

  r.post('/operators', need('owner'), async (req, res) => {
    const body = validate(createSchema, req.body);
    const now = new Date();
    const op: OperatorRecord = {
      id: newId('op_', now.getTime()),
      email: body.email,
      role: body.role,
      status: 'active',
      password_hash: await operators.hashPassword(body.password),
      totp_secret: null,
      totp_pending: null,
      totp_last_step: null,
      created_at: now.toISOString(),
    };
    await store.createOperator(op);
    res.status(201).json({ operator: operatorView(op) });
  });

  r.get('/operators', need('owner'), async (_req, res) => {
    res.json({ operators: (await store.listOperators()).map(operatorView) });
  });

  r.get('/operators/:id', need('owner'), async (req, res) => {
    res.json({ operator: operatorView(await find(String(req.params.id))) });
  });

  r.patch('/operators/:id', need('owner'), async (req, res) => {
    const target = await find(String(req.params.id));
    const body = validate(patchSchema, req.body);
    await keepAnOwner(target, body);
    const patch: OperatorPatch = { role: body.role, status: body.status };
    if (body.password) patch.password_hash = await operators.hashPassword(body.password);
    await store.updateOperator(target.id, patch);
    // Disabled, or a new password: every session of the operator ends now.
    if (body.status === 'disabled' || body.password) await store.deleteSessionsOf(target.id);
    res.json({ operator: operatorView(await find(target.id)) });
  });

  r.delete('/operators/:id', need('owner'), async (req, res) => {
    const target = await find(String(req.params.id));
    await keepAnOwner(target, null);
    await store.deleteOperator(target.id);
    res.json({ deleted: true, id: target.id });
  });

  // For an operator who lost their authenticator: the next sign-in needs the password only.
  r.delete('/operators/:id/totp', need('owner'), async (req, res) => {
    const target = await find(String(req.params.id));
    await store.updateOperator(target.id, { totp_secret: null, totp_pending: null });
    res.json({ operator: operatorView(await find(target.id)) });
  });

  // Enrolment: a secret (and its otpauth:// URI) to add to an authenticator app, confirmed by a code.
  r.post('/me/totp', async (_req, res) => {
    const actor = actorIn(res);
    if (actor.kind !== 'operator') throw new InvalidRequestError('The operator key has no second factor: sign in as a named operator.');
    if (actor.operator.totp_secret) throw new ConflictError('Two-factor sign-in is already on; an owner can reset it.');
    const secret = newOperatorTotpSecret();
    await store.updateOperator(actor.operator.id, { totp_pending: store.secrets.seal(actor.operator.id, secret) });
    res.status(201).json({ secret, uri: operatorTotpUri(secret, actor.operator.email) });
  });

  r.post('/me/totp/confirm', async (req, res) => {
    const actor = actorIn(res);
    if (actor.kind !== 'operator') throw new InvalidRequestError('The operator key has no second factor.');
    const { code } = validate(confirmSchema, req.body);
    const id = actor.operator.id;
    if (!actor.operator.totp_pending) throw new ConflictError('No enrolment under way: POST /v1/admin/me/totp first.');
    const pending = store.secrets.read(id, actor.operator.totp_pending);
    const step = pending === null ? null : operatorTotpStep(pending.secret, code, Date.now());
    if (pending === null || step === null) throw new UnauthorizedError('Wrong code: check the authenticator app and try again.');
    await store.updateOperator(id, { totp_secret: store.secrets.seal(id, pending.secret), totp_pending: null, totp_last_step: step });
    res.json({ operator: operatorView(await find(actor.operator.id)) });
  });

  return r;
}
