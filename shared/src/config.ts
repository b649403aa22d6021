import Joi from 'joi';

/** A configuration value that failed validation; the message names the variable. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Validates environment variables against a Joi schema (unknown variables are ignored, values
 * are converted: "8080" → 8080). Throws ConfigError naming every bad variable. Only `main.ts`
 * files call this; adapters receive explicit options.
 */
export function loadConfig<T>(schema: Joi.ObjectSchema<T>, env: NodeJS.ProcessEnv = process.env): T {
  const { value, error } = schema.validate(env, {
    abortEarly: false,
    allowUnknown: true,
    stripUnknown: true,
    convert: true,
  });
  if (error) {
    const lines = error.details.map((d) => `  - ${d.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return value;
}

/** Prints a ConfigError and exits with status 1; rethrows anything else. */
export function exitOnConfigError(err: unknown): never {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  throw err;
}

/** For `main.ts` files: the validated config, or a message naming the bad variables and exit 1. */
export function loadConfigOrExit<T>(schema: Joi.ObjectSchema<T>, env: NodeJS.ProcessEnv = process.env): T {
  try {
    return loadConfig(schema, env);
  } catch (err) {
    exitOnConfigError(err);
  }
}

/** Fragments reused by the services' schemas. */
export const commonConfig = {
  port: (fallback: number) => Joi.number().integer().min(0).max(65535).default(fallback),
  internalSecret: Joi.string().min(32).messages({
    'string.min': '"PLINTH_INTERNAL_SECRET" must be at least 32 characters',
  }),
  logLevel: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  dataDir: Joi.string().default('./data'),
  mongoUrl: Joi.string().uri({ scheme: ['mongodb', 'mongodb+srv'] }),
  /** PLINTH_MONGO_COMMIT_TIMEOUT_MS: maxCommitTimeMS of every MongoDB transaction commit. */
  mongoCommitTimeoutMs: Joi.number().integer().min(100).max(120_000).default(5000),
  redisUrl: Joi.string().uri({ scheme: ['redis', 'rediss'] }),
  /** One or more comma-separated http(s) URLs: the replicas of another service. */
  urlList: Joi.string()
    .pattern(/^https?:\/\/[^,\s]+(,\s*https?:\/\/[^,\s]+)*$/)
    .messages({ 'string.pattern.base': '{{#label}} must be one or more comma-separated http(s) URLs' }),
};
