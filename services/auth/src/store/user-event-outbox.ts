import type { ProjectId, WebhookEvent } from '@plinth/shared';

/**
 * The user events' outbox (docs/webhooks.md "User events"): `user.created` and `user.deleted`
 * are rows of the users' own database, written in the same transaction as the user's create or
 * delete, so an event exists exactly when its change committed. The relay (user-event-relay.ts)
 * hands each row to the webhook queue and marks it handed over; handed-over rows are kept for a
 * retention, then trimmed.
 */
export interface OutboxUserEvent {
  project: ProjectId;
  event: WebhookEvent;
}

export interface UserEventOutbox {
  /** Rows not handed over yet, oldest first, at most `limit`. */
  pending(limit: number): Promise<OutboxUserEvent[]>;
  /** Marks these events (by event id) handed over at `now` (epoch ms). Idempotent. */
  markHanded(ids: readonly string[], now: number): Promise<void>;
  /** Handed-over rows with an event id after `afterId` (ordered by it), at most `limit`: what the relay offers the queue again. */
  handedAfter(afterId: string, limit: number): Promise<OutboxUserEvent[]>;
  /** Deletes rows handed over before `before` (epoch ms); answers how many. */
  trim(before: number): Promise<number>;
}
