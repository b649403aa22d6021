export * from './revocation-checker';
export * from './redis-revocation-checker';
export * from './in-process-revocation-list';
export * from './redis-revocation-sync';
