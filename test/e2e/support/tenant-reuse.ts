/**
 * The scenario of a project id deleted and created again: the old tenant's tokens (an Auth
 * user's access token, a token minted with a custom claim for that user, one minted for an
 * outside user id) must be refused by every process, and the new tenant's work on every process.
 * Suites give it a way to call the API (through the gateway, or one process directly) and the
 * process that answered, so that each process is checked on its own.
 */

export interface Reply {
  status: number;
  body: unknown;
  /** Which process answered (a worker number, a replica's URL). */
  via: string;
}

export interface ApiCall {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Under `/v1/projects/{p}`. */
  path: string;
  key: string;
  /** X-Db-User-Token (records). */
  dbUserToken?: string;
  /** X-Auth-User-Token (auth). */
  authUserToken?: string;
  body?: unknown;
}

/** Calls one process (or lets the deployment pick one) and says which answered. */
export type Caller = (call: ApiCall) => Promise<Reply>;

export interface TenantKeys {
  publicKey: string;
  secretKey: string;
}

/** The tokens of one tenant, by what they are. */
export interface TenantTokens {
  /** An Auth user's access token (sign-up). */
  user: string;
  /** Minted for that Auth user with `role: "hr"`. */
  mintedForUser: string;
  /** Minted for a user id outside Auth, with `role: "hr"`. */
  mintedOutside: string;
}

async function ok(caller: Caller, call: ApiCall, status: number): Promise<Record<string, unknown>> {
  const res = await caller(call);
  if (res.status !== status) throw new Error(`${call.method ?? 'GET'} ${call.path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as Record<string, unknown>;
}

/**
 * Sets up a tenant on a fresh project: Auth on, a `payroll` collection that `role: "hr"` and
 * signed-in Auth users read,
 * one record whose `salary` says which tenant it is, and the three tokens.
 */
export async function setUpTenant(caller: Caller, keys: TenantKeys, label: string): Promise<TenantTokens> {
  const sk = keys.secretKey;
  await ok(caller, { method: 'PATCH', path: '/settings/auth', key: sk, body: { enabled: true, send_verification_on_signup: false } }, 200);
  await ok(
    caller,
    {
      method: 'POST',
      path: '/collections',
      key: sk,
      body: { name: 'payroll', fields: { salary: { type: 'text' } }, rules: { read: 'auth != null && (auth.claims.role == "hr" || auth.email != null)' } },
    },
    201,
  );
  await ok(caller, { method: 'POST', path: '/collections/payroll/records', key: sk, body: { data: { salary: label } } }, 201);
  const session = await ok(
    caller,
    { method: 'POST', path: '/auth/signup', key: keys.publicKey, body: { email: `hr@${label}.example`, password: 'correct horse battery' } },
    201,
  );
  const userId = (session.user as { id: string }).id;
  const mint = async (user_id: string) =>
    String((await ok(caller, { method: 'POST', path: '/auth/tokens', key: sk, body: { user_id, claims: { role: 'hr' } } }, 200)).access_token);
  return { user: String(session.access_token), mintedForUser: await mint(userId), mintedOutside: await mint(`ext-${label}`) };
}

/** Reads the payroll with a token: the status and the salaries seen. */
export async function readPayroll(caller: Caller, keys: TenantKeys, token: string): Promise<Reply & { salaries: string[] }> {
  const res = await caller({ path: '/collections/payroll/records', key: keys.publicKey, dbUserToken: token });
  const records = (res.body as { records?: Array<{ salary: string }> } | null)?.records ?? [];
  return { ...res, salaries: records.map((r) => r.salary) };
}

/**
 * Asks every process in `processes` (by calling until each answered `times` times, at most
 * `maxCalls` calls) and returns every reply: a process that never answered fails the suite.
 */
export async function onEveryProcess<R extends Reply>(
  processes: string[],
  ask: () => Promise<R>,
  times = 1,
  maxCalls = 40,
): Promise<R[]> {
  const replies: R[] = [];
  const count = new Map(processes.map((p) => [p, 0]));
  for (let i = 0; i < maxCalls && [...count.values()].some((n) => n < times); i++) {
    const r = await ask();
    replies.push(r);
    count.set(r.via, (count.get(r.via) ?? 0) + 1);
  }
  expect([...count.entries()].filter(([, n]) => n < times).map(([p]) => p)).toEqual([]);
  return replies;
}

/**
 * Polls `check` (true when every process answers as it should) every 50 ms for up to
 * `withinMs`; the last result is returned, so the suite asserts it.
 */
export async function within<T>(withinMs: number, check: () => Promise<{ done: boolean; value: T }>): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const r = await check();
    if (r.done || Date.now() >= deadline) return r.value;
    await new Promise((res) => setTimeout(res, 50));
  }
}
