import type { ChangeEventInput } from '@plinth/shared';

/**
 * Announces a committed change (the EventBus, for realtime). Called after the store committed and
 * awaited before the response. With a store that keeps the events itself (RecordStore
 * `writesEvents`: the event committed with the write, docs/architecture.md "The outbox"), it
 * only wakes the readers; otherwise it appends the event to the bus. Never throws.
 */
export type PublishChange = (event: ChangeEventInput) => Promise<void>;

export const noPublish: PublishChange = async () => {};
