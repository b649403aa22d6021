import { PlinthError } from '@plinth/shared';

/**
 * What a query that ran past its time budget answers (every adapter): 503 `unavailable` with
 * `details.reason: "query_timeout"` — the server stopped it; narrowing the query helps.
 */
export function queryTimeout(ms: number): PlinthError {
  return new PlinthError(
    'unavailable',
    `The query ran longer than its time budget of ${ms} ms and was stopped; narrow it with an indexed field, a smaller limit or fewer conditions.`,
    { reason: 'query_timeout', timeout_ms: ms },
  );
}
