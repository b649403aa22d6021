import request from 'supertest';
import type { Express } from 'express';
import { newId, signInternal, type KeyKind } from '@plinth/shared';

export const TEST_INTERNAL_SECRET = 'test-internal-secret-at-least-32-characters';

/** The headers the gateway adds to a request it forwards for `project` with a key of `keyKind`. */
export function gatewayHeaders(project: string, keyKind: KeyKind = 'secret'): Record<string, string> {
  const requestId = newId('req_');
  return {
    'x-plinth-project': project,
    'x-plinth-key-kind': keyKind,
    'x-request-id': requestId,
    'x-plinth-internal': signInternal(TEST_INTERNAL_SECRET, { project, keyKind, requestId }),
  };
}

/** Calls the service app as the gateway would, for `project` with a key of `keyKind`. */
export function asGateway(app: Express, project: string, keyKind: KeyKind = 'secret') {
  return {
    get: (path: string) => request(app).get(path).set(gatewayHeaders(project, keyKind)),
    post: (path: string) => request(app).post(path).set(gatewayHeaders(project, keyKind)),
  };
}
