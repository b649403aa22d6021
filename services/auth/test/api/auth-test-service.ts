import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import request from 'supertest';
import { asProjectId, loadConfig, signInternal, type KeyKind } from '@plinth/shared';
import { authConfigSchema } from '../../src/config';
import { buildAuthService, type BuiltAuthService } from '../../src/service';
import type { MailJob } from '../../src/mail/mail-outbox';
import type { AuthSettings } from '../../src/domain/auth-settings';

const SECRET = 'test-internal-secret-0123456789abcdef';

/** What a test sends: method, path under /v1/projects/<project>, key kind, body, headers. */
export interface Call {
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  key?: KeyKind;
  body?: object;
  userToken?: string;
  ip?: string;
  project?: string;
}

export interface CallResult {
  status: number;
  /** As supertest parses it; tests assert on it field by field. */
  body: any;
  headers: { [name: string]: string };
}

/**
 * The auth service built from configuration (as main.ts and standalone mode do) on a temp data
 * dir, driven with supertest behind a valid internal credential — what the gateway sends.
 * Records every response body, every password it sent and every log line, so a suite can
 * assert that none of them leaked.
 */
export class AuthTestService {
  readonly responses: unknown[] = [];
  readonly passwordsSent = new Set<string>();
  /** The service's clock (epoch ms); tests move it with advance(), never sleep. */
  private clock = { now: Date.now() };
  private projects = 0;
  private constructor(
    readonly service: BuiltAuthService,
    private readonly dir: string,
    /** Every line the service logged. */
    readonly logLines: string[],
    readonly defaultProject: string,
  ) {}

  static async start(env: { [name: string]: string } = {}, opts: { redisPrefix?: string } = {}): Promise<AuthTestService> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-auth-'));
    const config = loadConfig(authConfigSchema, {
      PLINTH_INTERNAL_SECRET: SECRET,
      PLINTH_DATA_DIR: dir,
      PLINTH_BCRYPT_COST: '4',
      PLINTH_RATE_LIMIT_IP: '10000',
      PLINTH_RATE_LIMIT_EMAIL: '10000',
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
    const service = await buildAuthService(config, logger, { clock: () => clock.now, redisPrefix: opts.redisPrefix });
    const t = new AuthTestService(service, dir, lines, 'proj-main');
    t.clock = clock;
    return t;
  }

  /** A fresh project id, so tests do not share users, limits or settings. */
  newProject(): string {
    return `proj-${++this.projects}-${Math.random().toString(36).slice(2, 8)}`;
  }

  advance(ms: number): void {
    this.clock.now += ms;
  }

  get now(): number {
    return this.clock.now;
  }

  async call(c: Call): Promise<CallResult> {
    const project = c.project ?? this.defaultProject;
    const keyKind: KeyKind = c.key ?? 'public';
    const requestId = `req-${Math.random().toString(36).slice(2)}`;
    let req = request(this.service.app)
      [c.method](`/v1/projects/${project}${c.path}`)
      .set('x-plinth-project', project)
      .set('x-plinth-key-kind', keyKind)
      .set('x-request-id', requestId)
      .set('x-plinth-internal', signInternal(SECRET, { project, keyKind, requestId }))
      .set('x-forwarded-for', c.ip ?? '203.0.113.7');
    if (c.userToken !== undefined) req = req.set('x-auth-user-token', c.userToken);
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

  /** A project with Auth enabled. */
  async enabledProject(settings: Partial<AuthSettings> = {}): Promise<string> {
    const p = this.newProject();
    await this.configure(p, settings);
    return p;
  }

  /** Mail jobs the service enqueued for the project, newest first. */
  async mails(project: string, to?: string): Promise<MailJob[]> {
    const outbox = this.service.outbox;
    if (!outbox) throw new Error('no embedded outbox');
    return outbox.list(asProjectId(project), to);
  }

  /** The newest job of a kind to an address; fails the test when there is none. */
  async lastMail(project: string, to: string, kind: MailJob['kind']): Promise<MailJob> {
    const job = (await this.mails(project, to)).find((j) => j.kind === kind);
    if (!job) throw new Error(`no ${kind} mail to ${to}`);
    return job;
  }

  async close(): Promise<void> {
    await this.service.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
