import type { Request, Response } from 'express';
import { clientGoneSignal } from '@plinth/shared';
import type { Requester } from '../flows/auth-context';

/** An anonymous client (sign-in, sign-up, reset), known by the address the service trusts. */
export function anonymousRequester(req: Request, res: Response): Requester {
  return { caller: `ip:${req.ip ?? 'unknown'}`, signal: clientGoneSignal(res) };
}

/** A signed-in user (password change, e-mail change, account deletion). */
export function userRequester(userId: string, res: Response): Requester {
  return { caller: `user:${userId}`, signal: clientGoneSignal(res) };
}

/** The project's own server, with the secret key (admin user creation). */
export function secretKeyRequester(res: Response): Requester {
  return { caller: 'secret-key', signal: clientGoneSignal(res) };
}
