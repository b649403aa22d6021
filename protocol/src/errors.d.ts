/** What every error answer's `error` says; the HTTP status follows from it (docs/api-conventions.md "Errors"). */
export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'reauthentication_required'
  | 'mfa_required'
  | 'not_found'
  | 'request_timeout'
  | 'conflict'
  | 'account_exists'
  | 'invalid_grant'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal'
  | 'unavailable'
  | 'overloaded'
  | 'insufficient_storage';

export type ErrorDetails = { [key: string]: unknown };

/** The body of every error response, and of a realtime `error` message. */
export interface ErrorEnvelope {
  error: ErrorCode;
  message: string;
  details?: ErrorDetails;
}
