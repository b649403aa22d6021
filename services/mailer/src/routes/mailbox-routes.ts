import { Router } from 'express';
import { InvalidRequestError, requireSecretKey } from '@plinth/shared';
import type { MailboxQuery, MailboxStore } from '../store/mailbox-store';

export const MAILBOX_DEFAULT_LIMIT = 50;
export const MAILBOX_MAX_LIMIT = 1000;

/** Reads `?to=` (empty = everyone) and `?limit=`; a bad value is a 400 naming the parameter. */
export function parseMailboxQuery(query: { [key: string]: unknown }): MailboxQuery {
  const { limit } = query;
  const to = query.to === '' ? undefined : query.to;
  if (to !== undefined && (typeof to !== 'string' || to.length > 320)) {
    throw new InvalidRequestError('"to" must be one e-mail address.', { to: 'must be one e-mail address' });
  }
  let parsedLimit = MAILBOX_DEFAULT_LIMIT;
  if (limit !== undefined) {
    parsedLimit = typeof limit === 'string' && /^\d{1,7}$/.test(limit) ? Number(limit) : NaN;
    if (!(parsedLimit >= 1 && parsedLimit <= MAILBOX_MAX_LIMIT)) {
      throw new InvalidRequestError(`"limit" must be an integer from 1 to ${MAILBOX_MAX_LIMIT}.`, {
        limit: `must be an integer from 1 to ${MAILBOX_MAX_LIMIT}`,
      });
    }
  }
  return to === undefined ? { limit: parsedLimit } : { to, limit: parsedLimit };
}

/**
 * The dev mailbox (docs/mailer.md), mounted only with the mailbox transport; with SMTP the path
 * is a 404 like any unknown route.
 * `GET /v1/projects/:project/mailbox?to=&limit=` (secret key) → `{messages}` newest first.
 */
export function mailboxRoutes(store: MailboxStore): Router {
  const router = Router();
  router.get('/v1/projects/:project/mailbox', async (req, res) => {
    const { project } = requireSecretKey(res);
    const messages = await store.list(project, parseMailboxQuery(req.query));
    res.json({ messages });
  });
  return router;
}
