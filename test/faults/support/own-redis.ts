import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { freePort } from '@plinth/testing/free-port';

async function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => {
      socket.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/**
 * A redis-server of a fault test's own, on a free port, without persistence: the test may kill
 * it, hang it (SIGSTOP) and restart it empty without touching the shared Redis on 6379.
 */
export class OwnRedis {
  private child: ChildProcess | null = null;
  private constructor(
    readonly port: number,
    private readonly args: string[],
  ) {}

  /** `args`: more redis-server options (e.g. `--dir` for a replica, which writes its first sync to disk). */
  static async start(args: string[] = []): Promise<OwnRedis> {
    const r = new OwnRedis(await freePort(), args);
    await r.start();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts (again) on the same port, with an empty data set. */
  async start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...this.args], {
      stdio: 'ignore',
    });
    this.child = child;
    const deadline = Date.now() + 10_000;
    while (!(await answersPing(this.port))) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server on ${this.port} did not start`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** SIGKILLs the server: every key is gone, connections are reset. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  }

  /** Hangs the server (SIGSTOP): connections stay open and nothing answers. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** A restart that loses every key, as a restart without persistence or a failover would. */
  async restartEmpty(): Promise<void> {
    await this.kill();
    await this.start();
  }
}
