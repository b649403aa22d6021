export * from './event-bus';
export * from './sqlite-event-bus';
export * from './sqlite-outbox';
export * from './sqlite-outbox-reader';
export * from './redis-event-bus';
export * from './from-config';
