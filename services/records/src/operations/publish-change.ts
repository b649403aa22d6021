import type { ChangeEventInput } from '@plinth/shared';

/**
 * Announces a committed change (the EventBus, for realtime). Called after the store committed and
 * awaited before the response, so an answered write is already in the event log. Never throws.
 */
export type PublishChange = (event: ChangeEventInput) => Promise<void>;

export const noPublish: PublishChange = async () => {};
