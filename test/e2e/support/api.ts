/**
 * A small fetch client for the end-to-end suites, which talk to a gateway running in another
 * process (no supertest: there is no in-process app).
 */

/** A parsed JSON answer. Suites narrow `body` to the shape the endpoint documents. */
export interface Answer<T> {
  status: number;
  body: T;
}

export interface CallOptions {
  /** Project key (public or secret) for `Authorization: Bearer`. */
  key?: string;
  /** Access token for `X-Auth-User-Token` (auth endpoints). */
  userToken?: string;
  /** Access token for `X-Db-User-Token` (records endpoints). */
  dbUserToken?: string;
  body?: unknown;
}

/** One request to `url + path`; the answer's JSON body (null when it has none). */
export async function call<T = Record<string, unknown>>(
  url: string,
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  path: string,
  opts: CallOptions = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = {};
  if (opts.key) headers.Authorization = `Bearer ${opts.key}`;
  if (opts.userToken) headers['X-Auth-User-Token'] = opts.userToken;
  if (opts.dbUserToken) headers['X-Db-User-Token'] = opts.dbUserToken;
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(url + path, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

/** The user object of auth answers (docs/auth.md §2). */
export interface UserBody {
  id: string;
  email: string;
  email_verified: boolean;
  status: string;
  has_password: boolean;
}

/** A Session answer (sign-up, sign-in, OTP redeem, refresh). */
export interface SessionBody {
  user: UserBody;
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

/** A project as the e2e suites reach it: gateway URL, id and keys. */
export interface ProjectAccess {
  url: string;
  id: string;
  publicKey: string;
  secretKey: string;
}

/** `/v1/projects/{id}` + `path`, called with `opts` (the suites add keys themselves). */
export function projectCall<T = Record<string, unknown>>(
  p: ProjectAccess,
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  path: string,
  opts: CallOptions = {},
): Promise<Answer<T>> {
  return call<T>(p.url, method, `/v1/projects/${p.id}${path}`, opts);
}

/** Turns Auth on for the project (secret key), with any other settings, and checks it answered 200. */
export async function enableAuth(p: ProjectAccess, settings: Record<string, unknown> = {}): Promise<void> {
  const res = await projectCall(p, 'PATCH', '/settings/auth', { key: p.secretKey, body: { enabled: true, ...settings } });
  expect(res).toMatchObject({ status: 200, body: { enabled: true, ...settings } });
}
