import Joi from 'joi';
import { InvalidRequestError } from '@plinth/shared';

/**
 * Validates a request body (or query) with Joi; on failure throws 400 `invalid_request` whose
 * `details` name every bad field: `{fields: {email: "must be a valid email"}}`. Values are
 * never echoed back, so a password cannot leak through an error.
 */
export function validate<T>(schema: Joi.ObjectSchema<T>, input: unknown): T {
  const { value, error } = schema.validate(input ?? {}, { abortEarly: false, convert: true });
  if (error) {
    const fields: { [field: string]: string } = {};
    for (const d of error.details) {
      const field = d.path.join('.') || String(d.context?.key ?? 'body');
      fields[field] ??= d.message.replace(/^"[^"]*" /, '').replace(/"/g, '');
    }
    throw new InvalidRequestError(`Invalid ${Object.keys(fields).join(', ')}.`, { fields });
  }
  return value;
}

export const emailSchema = Joi.string().trim().lowercase().email({ tlds: false }).max(254);

/** Passwords are 8–72 bytes of UTF-8 (bcrypt reads 72 bytes at most). */
export const passwordSchema = Joi.string()
  .custom((v: string, helpers) => {
    const bytes = Buffer.byteLength(v, 'utf8');
    if (bytes < 8) return helpers.message({ custom: 'must be at least 8 bytes' });
    if (bytes > 72) return helpers.message({ custom: 'must be at most 72 bytes' });
    return v;
  });

export const displayNameSchema = Joi.string().trim().min(1).max(200);
export const photoUrlSchema = Joi.string().uri({ scheme: ['http', 'https'] }).max(2048);
