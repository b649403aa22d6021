import type { GatewayOptions } from './app';
import { parseOrigins, type GatewaySharedConfig } from './config';

/** The gateway's options that both topologies read from the same variables. */
export type SharedGatewayOptions = Pick<
  GatewayOptions,
  | 'corsOrigins'
  | 'keyCacheTtlMs'
  | 'trustProxy'
  | 'bodyTimeoutMs'
  | 'auditRetentionDays'
  | 'operatorSessionTtlMs'
  | 'operatorSessionMaxMs'
  | 'operatorBcryptCost'
  | 'purgeRetryMs'
>;

export function sharedGatewayOptions(config: GatewaySharedConfig): SharedGatewayOptions {
  return {
    corsOrigins: parseOrigins(config.PLINTH_CORS_ORIGINS),
    keyCacheTtlMs: config.PLINTH_KEY_CACHE_TTL_MS,
    trustProxy: config.PLINTH_TRUST_PROXY,
    bodyTimeoutMs: config.PLINTH_BODY_TIMEOUT_MS,
    auditRetentionDays: config.PLINTH_AUDIT_RETENTION_DAYS,
    operatorSessionTtlMs: config.PLINTH_OPERATOR_SESSION_TTL_S * 1000,
    operatorSessionMaxMs: config.PLINTH_OPERATOR_SESSION_MAX_S * 1000,
    operatorBcryptCost: config.PLINTH_OPERATOR_BCRYPT_COST,
    purgeRetryMs: config.PLINTH_PURGE_RETRY_MS,
  };
}
