import type { Request, RequestHandler } from 'express';
import { InvalidRequestError, NotFoundError, requestContext, UnauthorizedError } from '@plinth/shared';
import type { SettingsReader } from '../flows/settings';

/** The header carrying the session's access token on Auth endpoints (contract §5). */
export const USER_TOKEN_HEADER = 'x-auth-user-token';

/**
 * The access token of an endpoint marked "access token header": X-Auth-User-Token. A token sent
 * in X-Db-User-Token (the records header) instead → 400 naming the right header.
 */
export function accessTokenOf(req: Request): string | undefined {
  const token = req.get(USER_TOKEN_HEADER);
  if (token === undefined && req.get('x-db-user-token') !== undefined) {
    throw new InvalidRequestError(
      'Auth endpoints take the user token in the X-Auth-User-Token header; X-Db-User-Token is for record operations.',
      { header: 'X-Auth-User-Token' },
    );
  }
  return token;
}

/** 401 unless the caller presented a project key (the gateway lets JWKS through without one). */
export const requireProjectKey: RequestHandler = (_req, res, next) => {
  if (requestContext(res).keyKind === 'none') {
    next(new UnauthorizedError('This endpoint needs a project key.'));
    return;
  }
  next();
};

/** 404 `not_found` while Auth is not enabled for the project (contract §1.8). */
export function requireAuthEnabled(settings: SettingsReader): RequestHandler {
  return async (_req, res, next) => {
    const { project } = requestContext(res);
    if (!(await settings.get(project)).enabled) {
      next(new NotFoundError('Auth is not enabled for this project.'));
      return;
    }
    next();
  };
}
