import type { ErrorCode } from '@plinth/protocol';

/** The error codes Plinth answers with, plus `network_error` (no answer reached the client). */
export type PlinthErrorCode = ErrorCode | 'network_error' | (string & {});

export interface PlinthErrorInit {
  status: number;
  code: PlinthErrorCode;
  message: string;
  details?: Record<string, unknown>;
  requestId?: string | null;
  /** The request that was answered with the error: `"POST /v1/projects/demo/collections"`. */
  request?: string;
  cause?: unknown;
}

/**
 * Every failure of a Plinth call, except an abort (which rejects with the signal's reason, as
 * `fetch` does). `status` is the HTTP status, or 0 when the request never got an answer
 * (`code: "network_error"`).
 */
export class PlinthError extends Error {
  readonly status: number;
  readonly code: PlinthErrorCode;
  readonly details: Record<string, unknown> | undefined;
  /** The server's `X-Request-Id`: quote it when reporting a problem. */
  readonly requestId: string | null;
  /** Method and path of the request answered with the error (undefined when no answer came). */
  readonly request: string | undefined;

  constructor(init: PlinthErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'PlinthError';
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.requestId = init.requestId ?? null;
    this.request = init.request;
  }
}

/**
 * A 409: a stale `version` on update or delete (then `currentVersion` is the record's version
 * now), a unique value taken, an e-mail taken, or an Idempotency-Key reused with another body.
 */
export class ConflictError extends PlinthError {
  /** The record's current version when the conflict is a stale `version`; otherwise undefined. */
  readonly currentVersion: number | undefined;

  constructor(init: PlinthErrorInit) {
    super(init);
    this.name = 'ConflictError';
    const v = init.details?.current_version;
    this.currentVersion = typeof v === 'number' ? v : undefined;
  }
}

/** Builds the typed error for an error answer (`{error, message, details?}`). */
export function errorFromResponse(status: number, body: unknown, requestId: string | null, request?: string): PlinthError {
  const b = (body && typeof body === 'object' ? body : {}) as { error?: unknown; message?: unknown; details?: unknown };
  const init: PlinthErrorInit = {
    status,
    code: typeof b.error === 'string' ? b.error : status >= 500 ? 'internal' : 'invalid_request',
    message: typeof b.message === 'string' ? b.message : `Plinth answered ${status}.`,
    details: b.details && typeof b.details === 'object' ? (b.details as Record<string, unknown>) : undefined,
    requestId,
    request,
  };
  return status === 409 ? new ConflictError(init) : new PlinthError(init);
}

/** True for the error of a request that never got an answer (worth retrying when idempotent). */
export function isNetworkError(err: unknown): err is PlinthError {
  return err instanceof PlinthError && err.code === 'network_error';
}
