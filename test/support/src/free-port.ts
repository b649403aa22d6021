import { pickPort } from '@plinth/gateway';

/** A port nobody listens on right now (the OS picks it; we release it for the child to bind). */
export async function freePort(): Promise<number> {
  return pickPort('127.0.0.1');
}
