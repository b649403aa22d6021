/** Milliseconds since the epoch. Injected everywhere time matters, so tests never sleep. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

/** Whole seconds since the epoch, as JWT claims use. */
export function epochSeconds(clock: Clock): number {
  return Math.floor(clock() / 1000);
}
