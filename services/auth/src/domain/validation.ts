import Joi from 'joi';
import { InvalidRequestError } from '@plinth/shared';
import { normalizeEmail } from './email';

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

const asciiEmail = Joi.string().email({ tlds: false }).max(254);

/** An e-mail address, normalised by normalizeEmail (NFC, lower case, punycode domain) before it is checked. */
export const emailSchema = Joi.string()
  .trim()
  .max(1024)
  .custom((v: string, helpers) => {
    const email = normalizeEmail(v);
    if (email === null || asciiEmail.validate(email).error) return helpers.message({ custom: 'must be a valid email' });
    return email;
  });

/** The most bytes of a password bcrypt reads; longer ones are refused, never truncated. */
export const MAX_PASSWORD_BYTES = 72;

/** Passwords are 8–72 bytes of UTF-8 (bcrypt reads 72 bytes at most). */
export const passwordSchema = Joi.string()
  .custom((v: string, helpers) => {
    const bytes = Buffer.byteLength(v, 'utf8');
    if (bytes < 8) return helpers.message({ custom: 'must be at least 8 bytes' });
    if (bytes > MAX_PASSWORD_BYTES) return helpers.message({ custom: 'must be at most 72 bytes' });
    return v;
  });

export const displayNameSchema = Joi.string().trim().min(1).max(200);
export const photoUrlSchema = Joi.string().uri({ scheme: ['http', 'https'] }).max(2048);
