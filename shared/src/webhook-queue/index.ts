export * from './webhook-job';
export * from './from-config';
