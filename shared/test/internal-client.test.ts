import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Router } from 'express';
import { createLogger } from '../src/logger';
import { createServiceApp } from '../src/service-app';
import { requestContext } from '../src/context';
import { InternalClient } from '../src/internal-client';
import { NotFoundError, PlinthError, UnavailableError } from '../src/errors';

const SECRET = 'shared-internal-secret-0123456789abcdef';

describe('InternalClient: service-to-service calls', () => {
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    const routes = Router();
    routes.get('/v1/projects/:project/auth/jwks.json', (_req, res) => {
      res.json({ keys: [], seenAs: requestContext(res) });
    });
    routes.get('/v1/projects/:project/missing', () => {
      throw new NotFoundError('No such thing.');
    });
    server = http.createServer(createServiceApp({ name: 'auth', internalSecret: SECRET, logger: createLogger('t', 'silent'), routes }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('is accepted by the callee chassis with the identity it signed', async () => {
    const client = new InternalClient({ baseUrl: url, internalSecret: SECRET });
    const body = await client.getJson<{ seenAs: { project: string; keyKind: string } }>('shop', 'none', '/v1/projects/shop/auth/jwks.json');
    expect(body.seenAs).toMatchObject({ project: 'shop', keyKind: 'none' });
  });

  it("surfaces the callee's error envelope as a PlinthError", async () => {
    const client = new InternalClient({ baseUrl: url, internalSecret: SECRET });
    const call = client.getJson('shop', 'secret', '/v1/projects/shop/missing');
    await expect(call).rejects.toThrow(PlinthError);
    await expect(client.getJson('shop', 'secret', '/v1/projects/shop/missing')).rejects.toMatchObject({ code: 'not_found', status: 404 });
  });

  it('is refused when signed with another secret', async () => {
    const client = new InternalClient({ baseUrl: url, internalSecret: 'another-secret-0123456789abcdefghijkl' });
    await expect(client.getJson('shop', 'none', '/v1/projects/shop/auth/jwks.json')).rejects.toMatchObject({ code: 'unauthorized' });
  });

  it('answers 503 unavailable when the callee cannot be reached', async () => {
    const client = new InternalClient({ baseUrl: 'http://127.0.0.1:9', internalSecret: SECRET });
    await expect(client.getJson('shop', 'none', '/x')).rejects.toThrow(UnavailableError);
  });
});
