import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '@plinth/testing/free-port';
import { STANDALONE_ENTRY as ENTRY, startStandalone as start, stopStandalone as stop } from '@plinth/testing/standalone-process';

describe('npm start (standalone mode) as a process', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-start-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('serves /healthz, prints working keys, shuts down on SIGTERM, and reuses the keys on a second start', async () => {
    const first = await start(dataDir);
    try {
      expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
      const projects = await fetch(`${first.url}/v1/admin/projects`, { headers: { Authorization: `Bearer ${first.operatorKey}` } });
      expect(projects.status).toBe(200);
      expect(((await projects.json()) as { projects: Array<{ id: string }> }).projects.map((p) => p.id)).toEqual(['demo']);
      for (const key of [first.publicKey, first.secretKey]) {
        const res = await fetch(`${first.url}/v1/projects/demo/collections`, { headers: { Authorization: `Bearer ${key}` } });
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ collections: [] });
      }
      const wrong = await fetch(`${first.url}/v1/projects/demo/collections`, { headers: { Authorization: `Bearer ${first.publicKey}x` } });
      expect(wrong.status).toBe(401);
      const creds = fs.statSync(path.join(dataDir, 'credentials.json'));
      expect(creds.mode & 0o777).toBe(0o600);
    } finally {
      expect(await stop(first)).toBe(0);
    }

    const second = await start(dataDir);
    try {
      expect(second.operatorKey).toBe(first.operatorKey);
      expect(second.publicKey).toBe(first.publicKey);
      expect(second.secretKey).toBe(first.secretKey);
      const projects = await fetch(`${second.url}/v1/admin/projects`, { headers: { Authorization: `Bearer ${second.operatorKey}` } });
      expect(((await projects.json()) as { projects: unknown[] }).projects).toHaveLength(1);
    } finally {
      expect(await stop(second)).toBe(0);
    }
  }, 90_000);
});

describe('mail links follow the port', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-links-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it.each([
    ['a given PORT', true],
    ['PORT=0 (any free port)', false],
  ])('without PLINTH_PUBLIC_URL, a reset link opens on this server\'s own port, and the banner says where: %s', async (_how, given) => {
    const chosen = given ? await freePort() : 0;
    const plinth = await start(dataDir, { PORT: String(chosen), PLINTH_PUBLIC_URL: '', PLINTH_BCRYPT_COST: '4', PLINTH_MAIL_POLL_MS: '50' });
    const port = given ? chosen : Number(new URL(plinth.url).port);
    const email = `links-${given ? 'given' : 'any'}@port.example`;
    try {
      expect(plinth.output()).toContain(`mail links:      http://localhost:${port}`);
      const call = (method: string, p: string, body?: object) =>
        fetch(`${plinth.url}/v1/projects/demo${p}`, {
          method,
          headers: { Authorization: `Bearer ${plinth.secretKey}`, 'Content-Type': 'application/json' },
          body: body && JSON.stringify(body),
        });
      expect((await call('PATCH', '/settings/auth', { enabled: true })).status).toBe(200);
      expect((await call('POST', '/auth/users', { email, password: 'links password' })).status).toBe(201);
      expect((await call('POST', '/auth/password/forgot', { email })).status).toBe(200);
      let text = '';
      for (let i = 0; i < 100 && !text; i += 1) {
        const mail = (await (await call('GET', `/mailbox?to=${email}`)).json()) as { messages: Array<{ text: string }> };
        text = mail.messages[0]?.text ?? '';
        if (!text) await new Promise((r) => setTimeout(r, 50));
      }
      const link = /(http\S+\/auth\/action\?\S+)/.exec(text)?.[1];
      expect(link).toMatch(new RegExp(`^http://localhost:${port}/v1/projects/demo/auth/action\\?`));
      // The link really opens: the hosted page answers on this port.
      expect((await fetch(link!.replace('localhost', '127.0.0.1'))).status).toBe(200);
    } finally {
      expect(await stop(plinth)).toBe(0);
    }
  }, 60_000);
});

describe('Ctrl+C', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-ctrlc-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('with two workers, SIGINT to the primary stops everything without waiting out the grace period', async () => {
    // A grace period far longer than any drain: only skipping it explains an early exit.
    const plinth = await start(dataDir, { PLINTH_WORKERS: '2', PLINTH_SHUTDOWN_GRACE_MS: '30000', LOG_LEVEL: 'info' });
    const began = Date.now();
    expect(await stop(plinth, 'SIGINT')).toBe(0);
    expect(Date.now() - began).toBeLessThan(15_000);
    expect(plinth.output()).not.toContain('still serving for the grace period');
  }, 60_000);
});

describe('start-up configuration errors', () => {
  it.each([
    ['PORT', 'not-a-port'],
    ['PLINTH_INTERNAL_SECRET', 'too-short'],
    ['LOG_LEVEL', 'loud'],
  ])('stops with exit code 1 and names %s when it is invalid', (name, value) => {
    let code = 0;
    let stderr = '';
    try {
      execFileSync(process.execPath, [ENTRY], { env: { ...process.env, [name]: value }, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      const err = e as { status: number; stderr: Buffer };
      code = err.status;
      stderr = err.stderr.toString();
    }
    expect(code).toBe(1);
    expect(stderr).toContain(`"${name}"`);
  });
});
