import { Router } from 'express';
import Joi from 'joi';
import { InvalidRequestError, NotFoundError, parseBody } from '@plinth/shared';
import { actorIn } from '../operators/admin-auth';
import type { AuditActor, AuditLog } from '../operators/audit-log';
import { roleAtLeast, type OperatorAuth } from '../operators/operator-auth';
import { operatorView, sessionView } from './operator-views';
import { validate } from './validate';

interface SessionDeps {
  operators: OperatorAuth;
  audit: AuditLog;
}

const signInSchema = Joi.object({
  email: Joi.string().trim().max(320).required(),
  password: Joi.string().max(200).required(),
  code: Joi.string().trim().max(12),
});

/** `POST /sessions`: e-mail + password (+ TOTP code) → a short-lived operator session. No credential needed. */
export function signInRoute(deps: SessionDeps): Router {
  const r = Router();
  r.post('/sessions', parseBody(), async (req, res) => {
    const email = typeof req.body?.email === 'string' ? req.body.email.trim().toLowerCase().slice(0, 320) : '';
    // Audited whether it succeeds or not; named by the e-mail tried (never the password or code).
    const who: AuditActor = { kind: 'operator', id: null, label: email || '(none)' };
    deps.audit.record(req, res, who, null);
    const body = validate(signInSchema, req.body);
    const { token, session, operator } = await deps.operators.signIn(body, req.ip ?? null);
    who.id = operator.id;
    who.label = operator.email;
    res.status(201).json({ token, session: sessionView(session), operator: operatorView(operator) });
  });
  return r;
}

/** Who am I, refresh, sign out, and the sessions list with revocation. */
export function sessionRoutes(deps: SessionDeps): Router {
  const { operators } = deps;
  const r = Router();

  r.get('/me', (_req, res) => {
    const actor = actorIn(res);
    if (actor.kind === 'bootstrap') return res.json({ kind: 'bootstrap', role: 'owner', operator: null, session: null });
    res.json({ kind: 'operator', role: actor.role, operator: operatorView(actor.operator), session: sessionView(actor.session, actor) });
  });

  r.post('/sessions/refresh', async (_req, res) => {
    const actor = actorIn(res);
    if (actor.kind !== 'operator') throw new InvalidRequestError('The operator key has no session to refresh.');
    res.json({ session: sessionView(await operators.refresh(actor.session), actor) });
  });

  r.delete('/sessions/current', async (_req, res) => {
    const actor = actorIn(res);
    if (actor.kind !== 'operator') throw new InvalidRequestError('The operator key has no session to end.');
    await operators.store.deleteSession(actor.session.id);
    res.json({ deleted: true, id: actor.session.id });
  });

  // An owner (or the operator key) sees every operator's sessions; anyone else their own.
  r.get('/sessions', async (_req, res) => {
    const actor = actorIn(res);
    const all = actor.kind === 'bootstrap' || roleAtLeast(actor.role, 'owner');
    const now = new Date().toISOString();
    const sessions = (await operators.store.listSessions(all ? undefined : actor.operator.id)).filter((s) => s.expires_at > now);
    res.json({ sessions: sessions.slice(0, 1000).map((s) => sessionView(s, actor)) });
  });

  r.delete('/sessions/:id', async (req, res) => {
    const actor = actorIn(res);
    const id = String(req.params.id);
    const all = actor.kind === 'bootstrap' || roleAtLeast(actor.role, 'owner');
    const mine = actor.kind === 'operator' && (await operators.store.listSessions(actor.operator.id)).some((s) => s.id === id);
    if (!(all || mine) || !(await operators.store.deleteSession(id))) throw new NotFoundError('Unknown session.');
    res.json({ deleted: true, id });
  });

  return r;
}
