/** The value semantics of rules and Predicate JSON live in @plinth/shared (realtime uses them too). */
export { compareOrdered, fieldValue, isIn, isOrderedPair, jsonEqual, type OrderingOp } from '@plinth/shared';
