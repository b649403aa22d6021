import type { KeyKind } from './internal-auth';
import type { Predicate, ProjectId, RecordDoc } from './types';

/**
 * The records service's `POST /v1/projects/{p}/collections/{c}/subscribe` as the realtime service
 * calls it on a client's behalf (docs/rules.md): in-process in standalone, over HTTP in cluster.
 */
export interface SubscribeCall {
  project: ProjectId;
  /** The key kind the client connected with. */
  keyKind: KeyKind;
  /** The client's access token (sent as `X-Db-User-Token`); absent for an anonymous client. */
  userToken?: string;
  collection: string;
  body: {
    where?: unknown;
    orderBy?: unknown;
    direction?: unknown;
    limit?: unknown;
    snapshot?: unknown;
    expand?: unknown;
  };
}

/** The `subscription` object of the subscribe endpoint's 200 answer. */
export interface SubscriptionAnswer {
  collection: string;
  revision: number;
  predicate: Predicate;
  order: { orderBy: string; direction: 'asc' | 'desc' };
  limit: number;
  expires_at: string | null;
  snapshot?: { records: RecordDoc[]; cursor: string | null };
  /** The records the read rule looked up (get/exists): a change to one re-resolves the subscription. */
  lookups?: Array<{ collection: string; id: string }>;
}

/** Resolves a subscription; rejects with the same PlinthError the REST endpoint answers with. */
export type ResolveSubscription = (call: SubscribeCall) => Promise<SubscriptionAnswer>;

/** The header records reads the user token from (contract §5). */
export const DB_USER_TOKEN_HEADER = 'x-db-user-token';
