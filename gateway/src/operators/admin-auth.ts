import type { RequestHandler, Response } from 'express';
import { ForbiddenError, UnauthorizedError } from '@plinth/shared';
import { bearer } from '../keys';
import type { KeyAuthenticator } from '../key-authenticator';
import type { OperatorRole } from '../store/operator-store';
import { actorOf, isMutation, type AuditLog } from './audit-log';
import { requireRole, type OperatorAuth, type OperatorActor } from './operator-auth';

/** The actor `authenticateOperator` found for this request. */
export function actorIn(res: Response): OperatorActor {
  return res.locals.actor as OperatorActor;
}

const PROJECT_IN_PATH = /^\/projects\/([^/]+)/;

/**
 * The operator API's credential check: the bootstrap operator key or a named operator's session
 * passes (and a mutating call is audited); a project key is 403; anything else 401.
 */
export function authenticateOperator(deps: { operators: OperatorAuth; keys: KeyAuthenticator; audit: AuditLog }): RequestHandler {
  return async (req, res, next) => {
    const credential = bearer(req.headers.authorization);
    const actor = await deps.operators.identify(credential);
    if (!actor) {
      if (credential && (await deps.keys.lookup(credential))) {
        throw new ForbiddenError('The operator API needs an operator session or the operator key (PLINTH_ADMIN_KEY), not a project key.');
      }
      throw new UnauthorizedError('Missing or invalid operator credentials: sign in (POST /v1/admin/sessions) or send the operator key.');
    }
    res.locals.actor = actor;
    if (isMutation(req.method, `/v1/admin${req.path}`)) {
      deps.audit.record(req, res, actorOf(actor), PROJECT_IN_PATH.exec(req.path)?.[1] ?? null);
    }
    next();
  };
}

/** Refuses the request unless the actor has at least `role`. */
export function need(role: OperatorRole): RequestHandler {
  return (_req, res, next) => {
    requireRole(actorIn(res), role);
    next();
  };
}
