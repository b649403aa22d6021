export * from './values';
export * from './matches-predicate';
