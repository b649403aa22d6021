/**
 * Starts the cluster topology on this machine: each service as its own process running its
 * compiled `main.js` (exactly what a container runs), and a gateway process proxying to them.
 * Used by the cluster-topology test suite and by the benchmarks. Needs `npm run build` first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { freePort } from './free-port';

const ROOT = path.resolve(__dirname, '../../..');

export type ClusterService = 'records' | 'auth' | 'mailer' | 'realtime';

const ENTRY: Record<ClusterService | 'gateway', string> = {
  records: 'services/records/dist/main.js',
  auth: 'services/auth/dist/main.js',
  mailer: 'services/mailer/dist/main.js',
  realtime: 'services/realtime/dist/main.js',
  gateway: 'gateway/dist/main.js',
};

export interface ClusterOptions {
  /** Replicas per service (default 1 each). */
  replicas?: Partial<Record<ClusterService, number>>;
  /**
   * More replicas per service that no other process is told about, as pods behind one Service
   * address: the gateway neither routes to them nor sends them purges (named `<svc>-unlisted-<i>`).
   */
  unlisted?: Partial<Record<ClusterService, number>>;
  /** Extra environment for every process (REDIS_URL, SMTP_URL, …). */
  env?: Record<string, string>;
  /** Per-service extra environment. */
  serviceEnv?: Partial<Record<ClusterService, Record<string, string>>>;
  /** Gateway replicas (default 1), all proxying to the same services; `url` is the first. */
  gateways?: number;
  /** Extra environment for the gateway processes only (e.g. REDIS_URL for key-cache invalidation). */
  gatewayEnv?: Record<string, string>;
  /** The first gateway's port, when it must be known before the services start (their PLINTH_PUBLIC_URL). */
  gatewayPort?: number;
}

export interface RunningProcess {
  name: string;
  url: string;
  child: ChildProcess;
  output: () => string;
}

export interface Cluster {
  url: string;
  /** Every gateway replica's URL (the first is `url`). */
  gatewayUrls: string[];
  adminKey: string;
  internalSecret: string;
  dataDir: string;
  processes: RunningProcess[];
  /** Creates a project through the operator API and returns its keys. */
  createProject(id?: string): Promise<{ id: string; publicKey: string; secretKey: string }>;
  /**
   * Starts the process called `name` again (SIGKILLed first if it still runs), with the same
   * environment on the same port, so every process that calls it finds it where it was; it
   * replaces the old one in `processes` once healthy.
   */
  restart(name: string): Promise<RunningProcess>;
  stop(): Promise<void>;
}

async function healthy(url: string): Promise<boolean> {
  try {
    // Bounded: whatever else listens on a port taken from under the child may never answer.
    return (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })).status === 200;
  } catch {
    return false;
  }
}

/**
 * Starts `entry` on `givenPort`, or on a free port. A free port is only free when it was picked:
 * the child binds it a second or so later, once its modules are loaded, and any other process
 * starting on this machine meanwhile may have taken it — then the child exits with EADDRINUSE and
 * it is started again on another port (up to three times).
 */
async function startProcess(name: string, entry: string, env: NodeJS.ProcessEnv, givenPort?: number): Promise<RunningProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startProcessOnce(name, entry, env, givenPort);
    } catch (err) {
      if (givenPort !== undefined || attempt >= 3 || !(err instanceof PortTakenError)) throw err;
    }
  }
}

class PortTakenError extends Error {}

async function startProcessOnce(name: string, entry: string, env: NodeJS.ProcessEnv, givenPort?: number): Promise<RunningProcess> {
  const port = givenPort ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [path.join(ROOT, entry)], {
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-200_000)));
  child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-200_000)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (await healthy(url)) return { name, url, child, output: () => out };
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      const message = `${name} did not start (exit ${child.exitCode}):\n${out}`;
      throw child.exitCode !== null && /EADDRINUSE|port is already in use/.test(out) ? new PortTakenError(message) : new Error(message);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function stopProcess(p: RunningProcess): Promise<void> {
  // A process a test killed with a signal has signalCode set and exitCode null.
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.child.once('exit', () => r()));
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Every key matching `pattern` in `redis`. */
export async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

/** Deletes every key matching `pattern` in `redis`. */
export async function deleteMatching(redis: Redis, pattern: string): Promise<void> {
  const keys = await scanKeys(redis, pattern);
  for (let i = 0; i < keys.length; i += 500) await redis.unlink(...keys.slice(i, i + 500));
}

/**
 * Removes the run's event streams (PLINTH_EVENTS_PREFIX), the nonces of its internal
 * credentials (PLINTH_NONCE_PREFIX) and its revocation sync keys (PLINTH_REVOCATION_SYNC_PREFIX)
 * from Redis, if it used Redis.
 */
async function deleteRunKeys(env: NodeJS.ProcessEnv): Promise<void> {
  if (!env.REDIS_URL) return;
  const redis = new Redis(env.REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    // Every key under the prefix: streams, counters, heads, the purge markers and the epoch.
    if (env.PLINTH_EVENTS_PREFIX) await deleteMatching(redis, `${env.PLINTH_EVENTS_PREFIX}*`);
    if (env.PLINTH_NONCE_PREFIX) await deleteMatching(redis, `${env.PLINTH_NONCE_PREFIX}*`);
    if (env.PLINTH_REVOCATION_SYNC_PREFIX) await deleteMatching(redis, `${env.PLINTH_REVOCATION_SYNC_PREFIX}*`);
    if (env.PLINTH_WEBHOOK_QUEUE) await deleteMatching(redis, `bull:${env.PLINTH_WEBHOOK_QUEUE}:*`);
  } catch {
    // Cleaning up is best effort: the keys are prefixed with the run's random id.
  } finally {
    redis.disconnect();
  }
}

export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-cluster-'));
  const internalSecret = randomBytes(32).toString('hex');
  const adminKey = `adm_${randomBytes(24).toString('hex')}`;
  const base: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LOG_LEVEL: 'warn',
    PLINTH_BCRYPT_COST: '4',
    PLINTH_OPERATOR_BCRYPT_COST: '4',
    PLINTH_RATE_LIMIT_IP: '100000',
    PLINTH_RATE_LIMIT_EMAIL: '100000',
    // Stopping a test cluster needs no unready period (suites that test it set their own).
    PLINTH_SHUTDOWN_GRACE_MS: '0',
    // SQLite files in the run's data directory: cluster processes need this said explicitly.
    PLINTH_STORAGE: 'sqlite',
    // Change events of this run in streams of their own on the shared Redis; deleted at stop.
    PLINTH_EVENTS_PREFIX: `test:events:${randomBytes(6).toString('hex')}:`,
    // The nonces of its internal credentials too (they expire within a minute).
    PLINTH_NONCE_PREFIX: `test:nonce:${randomBytes(6).toString('hex')}:`,
    // And which Redis data set its auth last brought up to date with the revocation log.
    PLINTH_REVOCATION_SYNC_PREFIX: `test:revsync:${randomBytes(6).toString('hex')}:`,
    // Its webhook queue (auth's user events, records' deliveries): deleted at stop.
    PLINTH_WEBHOOK_QUEUE: `test-webhooks-${randomBytes(6).toString('hex')}`,
    ...opts.env,
    PLINTH_DATA_DIR: dataDir,
    PLINTH_INTERNAL_SECRET: internalSecret,
  };
  const processes: RunningProcess[] = [];
  /** How each process was started, by name, for restart(). */
  const launched = new Map<string, { entry: string; env: NodeJS.ProcessEnv }>();
  const launch = async (name: string, entry: string, env: NodeJS.ProcessEnv, givenPort?: number): Promise<RunningProcess> => {
    const p = await startProcess(name, entry, env, givenPort);
    launched.set(name, { entry, env });
    return p;
  };
  const urls: Record<ClusterService, string[]> = { records: [], auth: [], mailer: [], realtime: [] };
  try {
    // In tiers, each tier's processes starting together: auth first — records (JWKS for user
    // tokens) and the mailer (mail settings) call it; realtime last — it resolves subscriptions
    // through records. Realtime runs only when asked for. A process that failed to start stops
    // the others of its tier (allSettled, so none is left running unrecorded).
    for (const tier of [['auth'], ['records', 'mailer'], ['realtime']] as const) {
      const starts: Array<{ svc: ClusterService; name: string; listed: boolean; started: Promise<RunningProcess> }> = [];
      for (const svc of tier) {
        const n = opts.replicas?.[svc] ?? (svc === 'realtime' ? 0 : 1);
        const callsAuth = svc === 'auth' ? {} : { AUTH_URL: urls.auth.join(',') };
        const callsRecords = svc === 'realtime' ? { RECORDS_URL: urls.records.join(',') } : {};
        const env = { ...base, ...callsAuth, ...callsRecords, ...opts.serviceEnv?.[svc] };
        for (let i = 0; i < n; i++) starts.push({ svc, name: `${svc}-${i}`, listed: true, started: launch(`${svc}-${i}`, ENTRY[svc], env) });
        for (let i = 0; i < (opts.unlisted?.[svc] ?? 0); i++) {
          starts.push({ svc, name: `${svc}-unlisted-${i}`, listed: false, started: launch(`${svc}-unlisted-${i}`, ENTRY[svc], env) });
        }
      }
      const settled = await Promise.allSettled(starts.map((s) => s.started));
      settled.forEach((r, k) => {
        if (r.status !== 'fulfilled') return;
        processes.push(r.value);
        if (starts[k]!.listed) urls[starts[k]!.svc].push(r.value.url);
      });
      const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    }
    const gatewayUrls: string[] = [];
    for (let i = 0; i < (opts.gateways ?? 1); i++) {
      const gateway = await launch(i === 0 ? 'gateway' : `gateway-${i}`, ENTRY.gateway, {
        ...base,
        ...opts.gatewayEnv,
        PLINTH_ADMIN_KEY: adminKey,
        RECORDS_URL: urls.records.join(','),
        AUTH_URL: urls.auth.join(','),
        MAILER_URL: urls.mailer.join(','),
        ...(urls.realtime.length ? { REALTIME_URL: urls.realtime.join(',') } : {}),
      }, i === 0 ? opts.gatewayPort : undefined);
      processes.push(gateway);
      gatewayUrls.push(gateway.url);
    }
    const url = gatewayUrls[0]!;
    let counter = 0;
    return {
      url,
      gatewayUrls,
      adminKey,
      internalSecret,
      dataDir,
      processes,
      createProject: async (id) => {
        const res = await fetch(`${url}/v1/admin/projects`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' },
          // Unique across clusters started by one process: per-project state in the shared Redis
          // (rate-limit counters) must not carry over from an earlier suite's project.
          body: JSON.stringify({ id: id ?? `c-${process.pid}-${++counter}-${Date.now().toString(36)}` }),
        });
        if (res.status !== 201) throw new Error(`createProject: ${res.status} ${await res.text()}`);
        const body = (await res.json()) as { project: { id: string }; keys: { public: string; secret: string } };
        return { id: body.project.id, publicKey: body.keys.public, secretKey: body.keys.secret };
      },
      restart: async (name) => {
        const at = processes.findIndex((p) => p.name === name);
        const spec = launched.get(name);
        if (at < 0 || !spec) throw new Error(`restart: no process called ${name}`);
        const old = processes[at]!;
        if (old.child.exitCode === null && old.child.signalCode === null) {
          const exited = new Promise<void>((r) => old.child.once('exit', () => r()));
          old.child.kill('SIGKILL');
          await exited;
        }
        const again = await startProcess(name, spec.entry, spec.env, Number(new URL(old.url).port));
        processes[at] = again;
        return again;
      },
      stop: async () => {
        for (const p of [...processes].reverse()) await stopProcess(p);
        fs.rmSync(dataDir, { recursive: true, force: true });
        await deleteRunKeys(base);
      },
    };
  } catch (err) {
    for (const p of processes) await stopProcess(p);
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}
