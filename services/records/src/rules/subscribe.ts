import { InvalidRequestError, type Collection, type Predicate } from '@plinth/shared';
import type { AccessContext, AccessPolicy } from '../domain/access-policy';
import { deniedByRules } from '../domain/rule-refusal';
import { andP } from './predicate-algebra';

export const DEFAULT_SUBSCRIBE_LIMIT = 50;
export const MAX_SUBSCRIBE_LIMIT = 1000;

export interface SubscriptionRequest {
  collection: Collection;
  /** The client's filter, already parsed and checked against the collection's fields. */
  where?: Predicate;
  ctx: AccessContext;
  /** 1–1000; default 50. */
  limit?: number;
}

/** The rule-checked part of `POST …/collections/{c}/subscribe`'s answer (docs/rules.md). */
export interface ResolvedSubscription {
  collection: string;
  /** The collection revision the predicate was resolved against: re-subscribe when it changes. */
  revision: number;
  /** where AND the read rule's residual, with `auth` and `request.time` substituted. */
  predicate: Predicate;
  limit: number;
  /**
   * When the user token expires (ISO 8601): the predicate carries values from the token, so the
   * caller must re-subscribe by then. null when no user token shaped the predicate (secret key,
   * or no token sent).
   */
  expires_at: string | null;
}

/**
 * Resolves a subscription for the realtime gateway: the read rule is partially evaluated for
 * this caller exactly as for a query, and ANDed with the client's `where`.
 * @throws ForbiddenError (403) when the read rule resolves to false for this caller.
 * @throws InvalidRequestError (400, details.field = "limit") for a limit outside 1–1000.
 */
export function resolveSubscription(policy: Pick<AccessPolicy, 'readFilter'>, req: SubscriptionRequest): ResolvedSubscription {
  const limit = req.limit ?? DEFAULT_SUBSCRIBE_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SUBSCRIBE_LIMIT) {
    throw new InvalidRequestError(`limit must be an integer from 1 to ${MAX_SUBSCRIBE_LIMIT}.`, { field: 'limit' });
  }
  const residual = policy.readFilter(req.ctx, req.collection);
  if (residual === false) {
    throw deniedByRules(req.ctx, `The read rule of ${req.collection.name} denies this caller.`);
  }
  const tokenShaped = req.ctx.keyKind !== 'secret' && req.ctx.auth !== null;
  return {
    collection: req.collection.name,
    revision: req.collection.revision,
    predicate: andP(req.where ?? true, residual),
    limit,
    expires_at: tokenShaped && req.ctx.auth ? new Date(req.ctx.auth.exp * 1000).toISOString() : null,
  };
}
