export * from './values';
export * from './matches-predicate';
export * from './text-match';
