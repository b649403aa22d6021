export * from './app';
export * from './config';
export * from './service';
export * from './mail/mail-outbox';
