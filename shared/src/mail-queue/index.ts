export * from './job-queue';
export * from './mail-job';
export * from './mail-queue';
export * from './embedded-job-queue';
export * from './bullmq-job-queue';
export * from './embedded-mail-queue';
export * from './bullmq-mail-queue';
export * from './from-config';
