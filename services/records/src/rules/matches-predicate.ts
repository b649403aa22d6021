/** The in-memory Predicate JSON evaluator lives in @plinth/shared (realtime matches events with it). */
export { comparisonHolds, matchesPredicate } from '@plinth/shared';
