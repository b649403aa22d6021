import type { Logger } from 'pino';
import { newId, type ProjectId, type WebhookEvent, type WebhookEventType, type WebhookQueue } from '@plinth/shared';
import { toPublicUser } from './domain/public-user';
import type { UserRecord, UserStore } from './store/user-store';

/**
 * The user store, telling webhooks (docs/webhooks.md "User events") when a user is created or
 * deleted: once the store has done it, a `fanout` job goes on the webhook queue, and records
 * turns it into one delivery per webhook that wants it. The job is enqueued after the user's own
 * write — not in its transaction — so a process that dies between the two, or a queue that
 * refuses the job, loses that one event (logged). Users removed in bulk (project deletion,
 * the anonymous-user sweep) send no event.
 */
export function withUserWebhookEvents(users: UserStore, queue: WebhookQueue, logger: Logger): UserStore {
  const emit = async (project: ProjectId, type: WebhookEventType, user: UserRecord) => {
    const event: WebhookEvent = { id: newId('evt_'), type, timestamp: new Date().toISOString(), data: { project, user: toPublicUser(user) } };
    try {
      await queue.enqueue({ id: `f_${event.id}`, project, kind: 'fanout', event });
    } catch (err) {
      logger.error({ err, project, type, user_id: user.id }, 'user webhook event not enqueued');
    }
  };
  const createUser: UserStore['createUser'] = async (project, user) => {
    await users.createUser(project, user);
    await emit(project, 'user.created', user);
  };
  const deleteUser: UserStore['deleteUser'] = async (project, id) => {
    const user = await users.getUser(project, id);
    const deleted = await users.deleteUser(project, id);
    if (deleted && user) await emit(project, 'user.deleted', user);
    return deleted;
  };
  return new Proxy(users, {
    get(target, prop) {
      if (prop === 'createUser') return createUser;
      if (prop === 'deleteUser') return deleteUser;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
