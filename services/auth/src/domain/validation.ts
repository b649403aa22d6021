import Joi from 'joi';
import { InvalidRequestError } from '@plinth/shared';

/** One bad input field, as listed in `details.fields` of a 400. */
export interface FieldProblem {
  field: string;
  message: string;
}

/**
 * 400 `invalid_request` naming the fields: `details: {field, fields: [{field, message}]}`,
 * `field` being the first bad one. Field names are values, never keys, so an error about the
 * `password` field has no key named like a password.
 */
export function invalidFields(problems: FieldProblem[]): InvalidRequestError {
  const names = [...new Set(problems.map((p) => p.field))];
  return new InvalidRequestError(`Invalid ${names.join(', ')}.`, { field: names[0], fields: problems });
}

/**
 * Validates a request body (or query) with Joi; on failure throws 400 `invalid_request` whose
 * `details.fields` name every bad field: `[{field: "email", message: "must be a valid email"}]`.
 * Values are never echoed back, so a password cannot leak through an error (and no key of the
 * error is named after a field).
 */
export function validate<T>(schema: Joi.ObjectSchema<T>, input: unknown): T {
  const { value, error } = schema.validate(input ?? {}, { abortEarly: false, convert: true });
  if (error) {
    throw invalidFields(
      error.details.map((d) => ({
        field: d.path.join('.') || 'body',
        message: d.message.replace(/^"[^"]*" /, '').replace(/"/g, ''),
      })),
    );
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
