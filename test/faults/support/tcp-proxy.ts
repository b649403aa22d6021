import net from 'node:net';

/**
 * A TCP proxy a fault test controls: it forwards every connection to a target port, can hold
 * back what the target sends (`hold`: a replication link that lags), and can be pointed at
 * another target, resetting the connections it had (`retarget`: a failover behind one address,
 * as a virtual IP or a Sentinel-aware proxy does).
 */
export class TcpProxy {
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private held = false;

  private constructor(
    private readonly server: net.Server,
    private target: number,
  ) {
    server.on('connection', (client) => this.pipe(client));
  }

  static async start(target: number): Promise<TcpProxy> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new TcpProxy(server, target);
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  private pipe(client: net.Socket): void {
    const upstream = net.connect(this.target, '127.0.0.1');
    const pair: [net.Socket, net.Socket] = [client, upstream];
    this.pairs.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    if (this.held) upstream.pause();
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  }

  /** Stops passing on what the target sends (it stays buffered); the other direction flows. */
  hold(): void {
    this.held = true;
    for (const [, upstream] of this.pairs) {
      upstream.unpipe();
      upstream.pause();
    }
  }

  /** New connections go to `target`; the current ones are reset. */
  retarget(target: number): void {
    this.target = target;
    for (const [client, upstream] of [...this.pairs]) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
  }

  async close(): Promise<void> {
    this.retarget(this.target);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
