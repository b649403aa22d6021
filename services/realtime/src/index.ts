export * from './config';
export * from './service';
export { CLOSE, type ClientMessage, type ServerMessage, type DeliveredEvent, type EventKind } from './protocol';
