export * from './sqlite-rate-limit-store';
