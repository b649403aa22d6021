/**
 * No answer and no log line ever carries a body value back: every public endpoint — read from
 * the route tables of the gateway and of each service, so a new endpoint is covered the day it
 * is added — is sent form-encoded bodies holding a password (a real form, and JSON text sent
 * without a JSON content type, as `curl -d` does). An endpoint that does not take forms refuses
 * with 415 in the error envelope before parsing; none answers 500; neither the answers nor the
 * captured logs of every service contain the password. Standalone: the logs are captured in-process.
 */
import request from 'supertest';
import type { Express } from 'express';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

const PASSWORD = 'Echo-Secret-Pa55word';
const FORM = `email=echo%40example.com&password=${PASSWORD}&new_password=${PASSWORD}&current_password=${PASSWORD}&code=${PASSWORD}`;
const JSON_AS_FORM = JSON.stringify({ email: 'echo@example.com', password: PASSWORD, data: { title: PASSWORD } });

/** Routes that take a form body (the contract's collection creation; browser form posts of the auth pages). */
const TAKES_FORMS = ['POST /v1/projects/:project/collections', 'POST /v1/projects/:project/auth/action', 'POST /v1/projects/:project/auth/oauth/callback'];
/** Routes whose body is bytes of any type, stored as they come (a resumable upload's part, an imported file's bytes). */
const TAKES_BYTES = ['PUT /v1/projects/:project/files/uploads/:upload/parts/:part', 'PUT /v1/projects/:project/files/:collection/:id/:name'];

interface Layer {
  route?: { path: string; methods: { [method: string]: boolean } };
  handle: { stack?: Layer[] };
  rawPath?: unknown;
}

/** `METHOD /path/:param` of every route of an express app, nested routers included. */
export function routeTable(app: Express): string[] {
  const out: string[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route && typeof layer.route.path === 'string') {
        for (const method of Object.keys(layer.route.methods)) out.push(`${method.toUpperCase()} ${prefix}${layer.route.path}`);
      } else if (layer.handle?.stack) {
        walk(layer.handle.stack, prefix + (typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : ''));
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return out;
}

describe('no body value is ever echoed', () => {
  let t: TestPlinth;
  const logs: string[] = [];
  let routes: string[];

  beforeAll(async () => {
    t = await startTestPlinth({ env: { LOG_LEVEL: 'debug' }, logs: { write: (line) => void logs.push(line) } });
    const apps = [t.app as Express, ...t.standalone!.services.map((s) => s.app)];
    // the public ones: under /v1/, as clients reach them (a service's internal purge is not routed)
    routes = [...new Set(apps.flatMap(routeTable))].filter((r) => / \/v1\//.test(r) && !r.endsWith('/purge')).sort();
  });
  afterAll(async () => {
    await t?.close();
  });

  function concrete(path: string): string {
    return path
      .replace(':project', t.project.id)
      .replace(':collection', 'echoes')
      .replace(':provider', 'google')
      .replace(':keyId', 'key_x')
      .replace(':delivery', 'd_x')
      .replace(':upload', 'up_x')
      .replace(':part', '1')
      .replace(':name', 'f_x')
      .replace(':id', 'rec_x')
      .replace('\\:', ':');
  }

  it('covers every public endpoint of the route tables', () => {
    expect(routes.length).toBeGreaterThan(70);
    expect(routes).toEqual(expect.arrayContaining(['POST /v1/projects/:project/auth/signin', 'PATCH /v1/projects/:project/collections/:collection/records/:id', 'POST /v1/admin/projects', ...TAKES_FORMS]));
    expect(routes.filter((r) => r.includes(':') && /:(?!project|collection|provider|keyId|delivery|upload|part|name|id\b)/.test(r.replace('\\:', '')))).toEqual([]);
  });

  it('refuses a form body with 415 before parsing where forms are not taken, and never answers with the password', async () => {
    const answers: string[] = [];
    for (const route of routes) {
      const [method, path] = route.split(' ') as [string, string];
      const keys = path.startsWith('/v1/admin/') ? [t.adminKey] : [t.project.secretKey, t.project.publicKey];
      for (const key of keys) {
        for (const body of [FORM, JSON_AS_FORM]) {
          const res = await request(t.app)
            [method.toLowerCase() as 'post'](concrete(path))
            .set('Authorization', `Bearer ${key}`)
            .set('Content-Type', 'application/x-www-form-urlencoded')
            .send(body);
          answers.push(`${route} ${res.status} ${res.text} ${JSON.stringify(res.headers)}`);
          expect({ route, status: res.status < 500 }).toEqual({ route, status: true });
          // A HEAD request has no content by definition (RFC 9110 §9.3.2): Node answers one sent with a body 400 before any route.
          if (!TAKES_FORMS.includes(route) && !TAKES_BYTES.includes(route) && method !== 'HEAD') {
            expect({ route, status: res.status, error: res.body?.error }).toEqual({ route, status: 415, error: 'unsupported_media_type' });
          }
        }
      }
    }
    expect(answers.filter((a) => a.includes(PASSWORD))).toEqual([]);
  });

  it('says that no user token was sent when a rule refuses a signed-out read', async () => {
    const made = await request(t.app)
      .post(`/v1/projects/${t.project.id}/collections`)
      .set('Authorization', `Bearer ${t.project.secretKey}`)
      .send({ name: 'private_notes', fields: { owner: { type: 'text' } }, rules: { read: 'auth != null && record.owner == auth.uid' } });
    expect(made.status).toBe(201);
    const res = await request(t.app).get(`/v1/projects/${t.project.id}/collections/private_notes/records`).set('Authorization', `Bearer ${t.project.publicKey}`);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: 'forbidden', message: expect.stringContaining('No user token was sent'), details: { user_token: 'missing' } });
  });

  it('logged every refusal, and no log line holds the password', () => {
    expect(logs.filter((line) => line.includes('"statusCode":415')).length).toBeGreaterThan(100);
    expect(logs.filter((line) => line.includes(PASSWORD))).toEqual([]);
  });
});
