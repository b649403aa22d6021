import { InvalidRequestError, PlinthError } from '@plinth/shared';
import type { Refusal } from './connection-quotas';
import { ProtocolError, type DeliveredEvent, type ServerMessage } from './protocol';

/** Serialized deliveries, shared by every subscription that receives the same one. */
const SERIALIZED = new WeakMap<DeliveredEvent, string>();

export function serialized(d: DeliveredEvent): string {
  let text = SERIALIZED.get(d);
  if (text === undefined) SERIALIZED.set(d, (text = JSON.stringify(d)));
  return text;
}

/** Turns anything thrown into the `error` message the client receives (REST's code and message). */
export function errorMessage(err: unknown, id?: string): ServerMessage {
  const e =
    err instanceof ProtocolError
      ? new InvalidRequestError(err.message, err.details)
      : err instanceof PlinthError
        ? err
        : new PlinthError('internal', 'Something went wrong.');
  const env = e.toEnvelope();
  const sid = id ?? (err instanceof ProtocolError ? err.id : undefined);
  return { type: 'error', ...(sid === undefined ? {} : { id: sid }), ...env };
}

/** The `error` a refused connection receives before its close code (connection-quotas.ts). */
export function refusalMessage(refused: Refusal): ServerMessage {
  return { type: 'error', error: 'rate_limited', message: refused.message, details: { limit: refused.limit } };
}

/** The `error` a connection past its message rate receives before close 4009. */
export function messageRateMessage(perSecond: number, burst: number): ServerMessage {
  return {
    type: 'error',
    error: 'rate_limited',
    message: `A connection may send ${perSecond} messages a second (pings included), ${burst} at once.`,
    details: { limit: perSecond, burst },
  };
}
