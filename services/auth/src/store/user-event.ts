import { newId, type ProjectId, type WebhookEventType } from '@plinth/shared';
import { toPublicUser } from '../domain/public-user';
import type { OutboxUserEvent } from './user-event-outbox';
import type { UserRecord } from './user-store';

/** The event of a user's create or delete (user-event-outbox.ts), carrying the user as clients see it (never the hash). */
export function userEvent(project: ProjectId, type: WebhookEventType, user: UserRecord, now: number): OutboxUserEvent {
  return { project, event: { id: newId('evt_'), type, timestamp: new Date(now).toISOString(), data: { project, user: toPublicUser(user) } } };
}
