export * from './event-bus';
export * from './sqlite-event-bus';
export * from './redis-event-bus';
export * from './from-config';
