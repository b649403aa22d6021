export * from './announcements';
export * from './sqlite-announcements';
export * from './redis-announcements';
export * from './from-config';
