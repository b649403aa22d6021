import type Joi from 'joi';
import { InvalidRequestError } from '@plinth/shared';

/** The body as the schema reads it, or 400 `invalid_request` naming each bad field. */
export function validate<T>(schema: Joi.ObjectSchema<T>, body: unknown): T {
  const { value, error } = schema.validate(body ?? {}, { abortEarly: false });
  if (error) {
    const fields = Object.fromEntries(error.details.map((d) => [d.path.join('.') || 'body', d.message]));
    throw new InvalidRequestError('Invalid request body.', { fields });
  }
  return value;
}
