import type { UserStore } from './store/user-store';
import type { UserEventRelay } from './user-event-relay';

/**
 * The user store, waking the user event relay (user-event-relay.ts) after a create or delete:
 * the store has written the event row in the user's own transaction (docs/webhooks.md "User
 * events"), and the relay hands it to the webhook queue at once instead of at its next poll.
 * A failed write wakes it too (harmless: it finds nothing new).
 */
export function withUserEventWakeups(users: UserStore, relay: Pick<UserEventRelay, 'wake'>): UserStore {
  const createUser: UserStore['createUser'] = async (project, user) => {
    try {
      await users.createUser(project, user);
    } finally {
      relay.wake();
    }
  };
  const deleteUser: UserStore['deleteUser'] = async (project, id) => {
    try {
      return await users.deleteUser(project, id);
    } finally {
      relay.wake();
    }
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
