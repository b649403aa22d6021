import type { Request, RequestHandler, Response } from 'express';
import { clientGoneSignal, requestContext } from '@plinth/shared';
import type { PasswordHasher } from '../domain/passwords';
import type { Requester } from '../flows/auth-context';

const anonymousCaller = (req: Request): string => `ip:${req.ip ?? 'unknown'}`;

/** An anonymous client (sign-in, sign-up, reset), known by the address the service trusts. */
export function anonymousRequester(req: Request, res: Response): Requester {
  return { caller: anonymousCaller(req), signal: clientGoneSignal(res) };
}

/** A signed-in user (password change, e-mail change, account deletion). */
export function userRequester(userId: string, res: Response): Requester {
  return { caller: `user:${userId}`, signal: clientGoneSignal(res) };
}

/** The project's own server, with the secret key (admin user creation). */
export function secretKeyRequester(res: Response): Requester {
  return { caller: 'secret-key', signal: clientGoneSignal(res) };
}

/**
 * Refuses at once (503 `overloaded`) an anonymous request whose password hash the pool could not
 * take now, before its rate-limit hit and its user lookup: under a spike, the refusals are most
 * of the requests, and each should cost as little as possible.
 */
export function hashingAdmission(passwords: PasswordHasher): RequestHandler {
  return (req, res, next) => {
    passwords.checkAdmission({ project: requestContext(res).project, caller: anonymousCaller(req) });
    next();
  };
}
