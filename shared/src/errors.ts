/**
 * One error hierarchy for every Plinth service (docs/api-conventions.md "Errors"). Every error a client sees is a
 * PlinthError rendered as the envelope `{error, message, details?}`.
 */
import type { ErrorCode, ErrorDetails, ErrorEnvelope } from '@plinth/protocol';

export type { ErrorCode, ErrorDetails, ErrorEnvelope } from '@plinth/protocol';

export const STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  reauthentication_required: 403,
  mfa_required: 401,
  not_found: 404,
  request_timeout: 408,
  conflict: 409,
  account_exists: 409,
  invalid_grant: 400,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
  overloaded: 503,
  insufficient_storage: 507,
};

export class PlinthError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers?: { [name: string]: string },
  ) {
    super(message);
    this.name = new.target.name;
    this.status = STATUS_OF[code];
  }

  toEnvelope(): ErrorEnvelope {
    return this.details === undefined
      ? { error: this.code, message: this.message }
      : { error: this.code, message: this.message, details: this.details };
  }
}

export class InvalidRequestError extends PlinthError {
  constructor(message: string, details?: ErrorDetails) {
    super('invalid_request', message, details);
  }
}
export class UnauthorizedError extends PlinthError {
  constructor(message = 'Missing or invalid credentials.', details?: ErrorDetails) {
    super('unauthorized', message, details);
  }
}
export class ForbiddenError extends PlinthError {
  constructor(message = 'This credential may not perform this operation.', details?: ErrorDetails) {
    super('forbidden', message, details);
  }
}
/**
 * A sensitive change (e-mail, password, deleting the account, a new sign-in method) without a
 * recent proof: the session's sign-in is older than the project's reauthentication window and
 * the request carries no password or code. The client proves it again (POST /auth/reauthenticate).
 */
export class ReauthenticationRequiredError extends PlinthError {
  constructor(message = 'This change needs a recent sign-in: prove it with POST /auth/reauthenticate, then try again.', details?: ErrorDetails) {
    super('reauthentication_required', message, details);
  }
}
/**
 * A sign-in whose first factor was right, of a user with a second factor: no session yet.
 * `details.challenge` (single use, short-lived) goes with a code to POST /auth/mfa/verify
 * (docs/auth.md "Two-factor sign-in"). Not an UnauthorizedError: it is no failed sign-in.
 */
export class MfaRequiredError extends PlinthError {
  constructor(details: ErrorDetails, message = 'A second factor is required: send the challenge with a code to POST /auth/mfa/verify.') {
    super('mfa_required', message, details);
  }
}
export class NotFoundError extends PlinthError {
  constructor(message = 'Not found.', details?: ErrorDetails) {
    super('not_found', message, details);
  }
}
/** The client did not finish sending its request body in time. */
export class RequestTimeoutError extends PlinthError {
  constructor(message = 'The request body did not arrive in time.', details?: ErrorDetails) {
    super('request_timeout', message, details);
  }
}
/** Raised by stores for unique-constraint violations and failed compare-and-set. */
export class ConflictError extends PlinthError {
  constructor(message = 'Conflict.', details?: ErrorDetails) {
    super('conflict', message, details);
  }
}
export class PayloadTooLargeError extends PlinthError {
  constructor(message = 'Request body is larger than 1 MiB.') {
    super('payload_too_large', message);
  }
}
export class UnsupportedMediaTypeError extends PlinthError {
  constructor(message = 'Unsupported content type.') {
    super('unsupported_media_type', message);
  }
}
export class RateLimitedError extends PlinthError {
  constructor(retryAfterSeconds: number, message = 'Too many requests; try again later.') {
    super('rate_limited', message, { retry_after: retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  }
}
export class UnavailableError extends PlinthError {
  constructor(message = 'Service temporarily unavailable.') {
    super('unavailable', message);
  }
}
/**
 * Refused at admission: the work queue this request needs is full, or it waited past its bound.
 * Answered at once (503 + Retry-After) instead of after the client has given up.
 */
export class OverloadedError extends PlinthError {
  constructor(retryAfterSeconds = 1, message = 'The server is busy; try again shortly.') {
    super('overloaded', message, { retry_after: retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  }
}
/** The disk under a store is full: the write was not saved. */
export class InsufficientStorageError extends PlinthError {
  constructor(message = 'The server\'s disk is full; the write was not saved. Try again once space is freed.') {
    super('insufficient_storage', message);
  }
}
export class InternalError extends PlinthError {
  constructor(message = 'Something went wrong.') {
    super('internal', message);
  }
}
