/**
 * Which query shapes are heavy: a shape (the SQL text of a query, values bound apart) whose last
 * run did not finish within the light lane's slice is heavy for a while, so its next queries go
 * straight to the heavy lane (sqlite-query-lanes.ts) instead of each spending a slice first. A
 * heavy shape that later runs fast is light again, and every mark expires, so a collection that
 * shrank, or a cold first run, does not brand a shape for good. Bounded: the oldest marks go first.
 */
const MAX_SHAPES = 500;
/** A shape is heavy for this long after its last slow run. */
const HEAVY_FOR_MS = 60_000;

export class QueryShapeCosts {
  /** shape → until when it counts as heavy (Date.now ms). */
  private readonly heavyUntil = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  isHeavy(shape: string): boolean {
    if (this.heavyUntil.size === 0) return false;
    const until = this.heavyUntil.get(shape);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.heavyUntil.delete(shape);
    return false;
  }

  /** A run of `shape` outlasted the light slice. */
  markHeavy(shape: string): void {
    this.heavyUntil.delete(shape);
    if (this.heavyUntil.size >= MAX_SHAPES) this.heavyUntil.delete(this.heavyUntil.keys().next().value as string);
    this.heavyUntil.set(shape, this.now() + HEAVY_FOR_MS);
  }

  /** A run of `shape` on the heavy lane was quick after all. */
  markLight(shape: string): void {
    this.heavyUntil.delete(shape);
  }
}
