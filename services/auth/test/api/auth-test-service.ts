import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import request from 'supertest';
import { asProjectId, createWebhookQueueFromConfig, loadConfig, newId, newSecret, NotFoundError, internalHeaders, type KeyKind } from '@plinth/shared';
import { createGatewayApp, generateKey, inProcessUpstream, SqliteProjectStore, type Upstream } from '@plinth/gateway';
import type { Express } from 'express';
import { authConfigSchema } from '../../src/config';
import { forwardingHandle } from '../forwarding-handle';
import { deleteRedisKeys } from '../redis-keys';
import { RecordingOutbox } from './recording-outbox';
import { buildAuthService, type BuiltAuthService } from '../../src/service';
import type { MailJob } from '../../src/mail/mail-outbox';
import type { AuthSettings } from '../../src/domain/auth-settings';

/** The webhook queue each started service was given, closed after it. */
const closeWebhookQueue = new WeakMap<BuiltAuthService, () => Promise<void>>();

const SECRET = 'test-internal-secret-0123456789abcdef';

/** What a test sends: method, path under /v1/projects/<project>, key kind, body, headers. */
export interface Call {
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  /** Which of the project's keys to send as `Authorization: Bearer`; `none` sends no key. Default public. */
  key?: KeyKind;
  body?: object;
  userToken?: string;
  /** Extra request headers. */
  headers?: { [name: string]: string };
  /** The client address, sent as X-Forwarded-For (the gateway trusts one proxy hop here). */
  ip?: string;
  project?: string;
  /**
   * Skip the gateway: call the service with a valid internal credential for `key`, as the
   * gateway would. Only for checking the service's own guards.
   */
  direct?: boolean;
}

export interface CallResult {
  status: number;
  /** As supertest parses it; tests assert on it field by field. */
  body: any;
  headers: { [name: string]: string };
}

interface ProjectKeys {
  publicKey: string;
  secretKey: string;
}

/** Routes of the other services: not under test here. */
const elsewhere: Upstream = {
  kind: 'in-process',
  handle: (_req, _res, next) => next(new NotFoundError('Not part of the auth test composition.')),
  close: () => {},
};

/**
 * The auth service built from configuration (as main.ts and standalone mode do) on a temp data
 * dir, mounted in-process behind the real gateway (project keys, routing, internal credential),
 * with an injectable clock. Records every response body, every password it sent and every log
 * line, so a suite can assert that none of them leaked.
 */
export class AuthTestService {
  readonly responses: unknown[] = [];
  readonly passwordsSent = new Set<string>();
  private readonly keys = new Map<string, ProjectKeys>();
  private projects = 0;
  private server: http.Server | null = null;

  private constructor(
    readonly service: BuiltAuthService,
    private readonly gateway: Express,
    private readonly projectStore: SqliteProjectStore,
    private readonly dir: string,
    /** Every line the service and gateway logged. */
    readonly logLines: string[],
    /** The service's clock (epoch ms); tests move it with advance(), never sleep. */
    private readonly clock: { now: number },
    /** Redis used by the service and the prefix of its keys, removed on close. */
    private readonly redis: { url: string; prefix: string } | null,
    /** Every mail job the service enqueued. */
    private readonly outbox: RecordingOutbox,
    /** The queue name the configured MailQueue uses (BullMQ). */
    readonly mailQueueName: string,
  ) {}

  /** The data directory the service was configured with. */
  get dataDir(): string {
    return this.dir;
  }

  /**
   * `configuredMailQueue`: send mail jobs to the MailQueue the configuration builds (as in
   * production) instead of recording them; its queue name is `mailQueueName`.
   */
  static async start(env: { [name: string]: string } = {}, opts: { configuredMailQueue?: boolean } = {}): Promise<AuthTestService> {
    const redisPrefix = `test:${newId('auth_')}:`;
    const mailQueueName = `test-mail-${newId('')}`;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-auth-'));
    const config = loadConfig(authConfigSchema, {
      PLINTH_INTERNAL_SECRET: SECRET,
      PLINTH_DATA_DIR: dir,
      PLINTH_BCRYPT_COST: '4',
      PLINTH_RATE_LIMIT_IP: '10000',
      PLINTH_RATE_LIMIT_EMAIL: '10000',
      PLINTH_TRUST_PROXY: '1',
      // With REDIS_URL: the revocation sync keys beside the run's other keys, deleted with them.
      PLINTH_REVOCATION_SYNC_PREFIX: `${redisPrefix}revocations:`,
      ...env,
    });
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    const logger = pino({ level: 'debug' }, sink);
    const clock = { now: Date.now() };
    const outbox = new RecordingOutbox();
    // User events for webhooks go to an embedded queue in the run's directory, never the shared Redis.
    const webhookQueue = createWebhookQueueFromConfig({ ...config, REDIS_URL: undefined });
    const service = await buildAuthService(config, logger, {
      clock: () => clock.now,
      redisPrefix,
      outbox: opts.configuredMailQueue ? undefined : outbox,
      mailQueueName,
      webhookQueue,
    });
    closeWebhookQueue.set(service, () => webhookQueue.close());
    const projectStore = new SqliteProjectStore(path.join(dir, 'gateway.db'), { internalSecret: SECRET });
    const gateway = createGatewayApp({
      store: projectStore,
      upstreams: { auth: inProcessUpstream(service.app), records: elsewhere, mailer: elsewhere },
      adminKey: newSecret('adm_', 24),
      logger,
      corsOrigins: '*',
      keyCacheTtlMs: 60_000,
      trustProxy: 1,
    });
    const redis = env.REDIS_URL ? { url: env.REDIS_URL, prefix: redisPrefix } : null;
    return new AuthTestService(service, gateway.app, projectStore, dir, lines, clock, redis, outbox, mailQueueName);
  }

  /** A fresh project with a public and a secret key; Auth disabled, as for any new project. */
  async newProject(): Promise<string> {
    const id = asProjectId(`proj-${++this.projects}-${Math.random().toString(36).slice(2, 8)}`);
    const now = new Date();
    const pub = generateKey(id, 'public', now);
    const sec = generateKey(id, 'secret', now);
    await this.projectStore.createProject({ id, name: id, created_at: now.toISOString() }, [pub.record, sec.record]);
    this.keys.set(id, { publicKey: pub.value, secretKey: sec.value });
    return id;
  }

  /** The gateway on a real port of 127.0.0.1 (for tests that need a connection they can cut). */
  async listen(): Promise<string> {
    this.server ??= await new Promise<http.Server>((resolve) => {
      const server = http.createServer(this.gateway).listen(0, '127.0.0.1', () => resolve(server));
    });
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The public key of a test project. */
  publicKey(project: string): string {
    const keys = this.keys.get(project);
    if (!keys) throw new Error(`unknown test project ${project}`);
    return keys.publicKey;
  }

  advance(ms: number): void {
    this.clock.now += ms;
  }

  get now(): number {
    return this.clock.now;
  }

  async call(c: Call & { project: string }): Promise<CallResult> {
    const keyKind: KeyKind = c.key ?? 'public';
    const url = `/v1/projects/${c.project}${c.path}`;
    let req: request.Test;
    if (c.direct) {
      const requestId = `req-${Math.random().toString(36).slice(2)}`;
      const body = c.body === undefined ? undefined : JSON.stringify(c.body);
      const op = { method: c.method.toUpperCase(), path: url };
      req = request(this.service.app)
        [c.method](url)
        .set(internalHeaders(SECRET, { project: c.project, keyKind, requestId }, op, body));
    } else {
      req = request(this.gateway)[c.method](url);
      const keys = this.keys.get(c.project);
      if (keyKind !== 'none') {
        if (!keys) throw new Error(`unknown test project ${c.project}`);
        req = req.set('authorization', `Bearer ${keyKind === 'secret' ? keys.secretKey : keys.publicKey}`);
      }
    }
    req = req.set('x-forwarded-for', c.ip ?? '203.0.113.7');
    if (c.userToken !== undefined) req = req.set('x-auth-user-token', c.userToken);
    for (const [name, value] of Object.entries(c.headers ?? {})) req = req.set(name, value);
    const body = c.body as { password?: unknown } | undefined;
    if (body && typeof body.password === 'string') this.passwordsSent.add(body.password);
    const res = c.body === undefined ? await req : await req.send(c.body);
    this.responses.push(res.body);
    return { status: res.status, body: res.body, headers: res.headers as { [name: string]: string } };
  }

  /** Saves Auth settings with the secret key (enabling Auth unless told otherwise). */
  async configure(project: string, settings: Partial<AuthSettings> = {}): Promise<void> {
    const r = await this.call({ method: 'patch', path: '/settings/auth', key: 'secret', project, body: { enabled: true, ...settings } });
    if (r.status !== 200) throw new Error(`configure failed: ${r.status} ${JSON.stringify(r.body)}`);
  }

  /** A new project with Auth enabled. */
  async enabledProject(settings: Partial<AuthSettings> = {}): Promise<string> {
    const p = await this.newProject();
    await this.configure(p, settings);
    return p;
  }

  /** Mail jobs the service enqueued for the project, newest first. */
  async mails(project: string, to?: string): Promise<MailJob[]> {
    await this.service.idle(); // forgot and otp/request enqueue after answering
    return this.outbox.list(asProjectId(project), to);
  }

  /** The newest job of a kind to an address; fails the test when there is none. */
  async lastMail(project: string, to: string, kind: MailJob['kind']): Promise<MailJob> {
    const job = (await this.mails(project, to)).find((j) => j.kind === kind);
    if (!job) throw new Error(`no ${kind} mail to ${to}`);
    return job;
  }

  async close(): Promise<void> {
    if (this.server) {
      this.server.closeAllConnections();
      await new Promise((resolve) => this.server!.close(resolve));
    }
    await this.service.close();
    await closeWebhookQueue.get(this.service)?.();
    await this.projectStore.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
    if (this.redis) await deleteRedisKeys(this.redis.prefix, this.redis.url);
  }
}

/**
 * One AuthTestService for the calling test file: started before its tests, closed after. The
 * returned handle forwards to the running instance.
 */
export function useAuthTestService(
  env: { [name: string]: string } = {},
  opts: { configuredMailQueue?: boolean } = {},
): AuthTestService {
  let running: AuthTestService | null = null;
  beforeAll(async () => {
    running = await AuthTestService.start(env, opts);
  });
  afterAll(async () => {
    await running?.close();
  });
  return forwardingHandle(() => running, 'the auth test service');
}
