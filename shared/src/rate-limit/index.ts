export * from './sqlite-rate-limit-store';
export * from './fail-safe-store';
