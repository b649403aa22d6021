import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/** `oidc-provider` in a child process (op-server.mjs), on a free local port. */
export class TestOpenIdProvider {
  private constructor(
    readonly issuer: string,
    private readonly child: ChildProcess,
  ) {}

  static async start(): Promise<TestOpenIdProvider> {
    const child = spawn(process.execPath, [path.join(__dirname, 'op-server.mjs')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const issuer = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /READY (\S+)/.exec(out);
        if (m) resolve(m[1] as string);
      });
      child.once('exit', (code) => reject(new Error(`op-server exited (${code}): ${err}`)));
    });
    return new TestOpenIdProvider(issuer, child);
  }

  private async control(what: string, body: object): Promise<void> {
    const res = await fetch(`${this.issuer}/__test/${what}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 204) throw new Error(`op-server ${what}: ${res.status}`);
  }

  registerClient(client: { client_id: string; client_secret: string; redirect_uris: string[] }): Promise<void> {
    return this.control('client', client);
  }

  account(account: { sub: string; email: string; email_verified: boolean }): Promise<void> {
    return this.control('account', account);
  }

  /** Makes the ID tokens of the next sign-ins carry a wrong claim (re-signed with the provider's key), or stops. */
  tamper(mode: 'aud' | 'iss' | 'nonce' | 'exp' | null): Promise<void> {
    return this.control('tamper', { mode });
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await exited;
  }
}
