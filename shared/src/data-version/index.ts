export * from './data-version';
export * from './sqlite-data-version';
export * from './mongo-data-version';
