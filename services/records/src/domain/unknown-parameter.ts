import { InvalidRequestError } from '@plinth/shared';

/** What a parameter name looks like; anything else is not repeated back (it may be a body value). */
const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/**
 * 400 for a body parameter the endpoint does not take. The name is repeated in the answer only
 * when it looks like one: a form body holding JSON text (`curl -d '{"password":…}'` without a
 * JSON content type) parses as one long parameter name, which must never be echoed.
 */
export function unknownParameter(key: string): InvalidRequestError {
  return PARAMETER_NAME.test(key)
    ? new InvalidRequestError(`Unknown parameter "${key}".`, { field: key })
    : new InvalidRequestError('Unknown parameter (its name is not repeated: it does not look like a parameter name; was a JSON body sent without Content-Type: application/json?).');
}
