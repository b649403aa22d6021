import type { Response } from 'express';
import type { KeyKind } from './internal-auth';
import type { ProjectId } from './types';
import { ForbiddenError } from './errors';

/** Who is calling, as established by the gateway and verified by the service chassis. */
export interface RequestContext {
  project: ProjectId;
  keyKind: KeyKind;
  requestId: string;
  /** The id of the project key presented (absent on service → service calls). */
  keyId?: string;
  /** The client's address as the gateway trusts it (absent on service → service calls). */
  clientAddress?: string;
}

/** The context of the current request. Only valid behind the chassis' internal-auth middleware. */
export function requestContext(res: Response): RequestContext {
  const ctx = res.locals.plinth as RequestContext | undefined;
  if (!ctx) throw new Error('requestContext() called outside an authenticated route');
  return ctx;
}

/** Throws 403 unless the caller used the project's secret key. */
export function requireSecretKey(res: Response): RequestContext {
  const ctx = requestContext(res);
  if (ctx.keyKind !== 'secret') throw new ForbiddenError('This operation needs the secret key.');
  return ctx;
}

/**
 * Throws 403 unless the caller is an operator — the operator key or a named operator's session,
 * which the gateway forwards as the secret key with the operator's id (`op_…`) or `bootstrap` as
 * the key id; a project key's id is `key_…`. For what moves a whole project (file bytes, webhook
 * signing secrets in the clear): a project's own secret key does not reach it. A mutation also
 * needs the admin role at the gateway, so these routes are POST/PUT even when they read.
 */
export function requireOperator(res: Response): RequestContext {
  const ctx = requestContext(res);
  const id = ctx.keyId ?? '';
  if (ctx.keyKind !== 'secret' || !(id === 'bootstrap' || id.startsWith('op_'))) {
    throw new ForbiddenError('This operation needs an operator: the operator key, or an operator session of role admin or owner.');
  }
  return ctx;
}
