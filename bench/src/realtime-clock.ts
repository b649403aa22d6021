/**
 * Milliseconds on the machine's monotonic clock (`process.hrtime`, CLOCK_MONOTONIC on Linux):
 * the same clock in every process, so a send time taken in the writer and an arrival time taken
 * in a receiving process can be subtracted.
 */
export function benchClockMs(): number {
  const [s, ns] = process.hrtime();
  return s * 1e3 + ns / 1e6;
}
