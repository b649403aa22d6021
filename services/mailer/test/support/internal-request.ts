import request from 'supertest';
import type { Express } from 'express';
import { internalHeaders, newId, type KeyKind } from '@plinth/shared';

export const TEST_INTERNAL_SECRET = 'test-internal-secret-at-least-32-characters';

/** The headers the gateway adds to a body-less `method path` it forwards for `project` with a key of `keyKind`. */
export function gatewayHeaders(project: string, keyKind: KeyKind, method: string, path: string): Record<string, string> {
  return internalHeaders(TEST_INTERNAL_SECRET, { project, keyKind, requestId: newId('req_') }, { method, path });
}

/** Calls the service app as the gateway would, for `project` with a key of `keyKind`. */
export function asGateway(app: Express, project: string, keyKind: KeyKind = 'secret') {
  return {
    get: (path: string) => request(app).get(path).set(gatewayHeaders(project, keyKind, 'GET', path)),
    post: (path: string) => request(app).post(path).set(gatewayHeaders(project, keyKind, 'POST', path)),
  };
}
