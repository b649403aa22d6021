/** A TCP relay in front of a server that a test can cut, and keep shut, to force a disconnect. */
import net from 'node:net';

export interface TcpProxy {
  url: string;
  /** Connections accepted so far. */
  accepted: number;
  /** Cuts every open connection; with `shut`, refuses new ones until `open()`. */
  cut(opts?: { shut?: boolean }): void;
  open(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(upstreamUrl: string): Promise<TcpProxy> {
  const up = new URL(upstreamUrl);
  const sockets = new Set<net.Socket>();
  let shut = false;
  const state = { accepted: 0 };
  const server = net.createServer((client) => {
    if (shut) return void client.destroy();
    state.accepted++;
    const upstream = net.connect(Number(up.port), up.hostname);
    sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get accepted() {
      return state.accepted;
    },
    cut(opts = {}) {
      shut = opts.shut ?? false;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    open() {
      shut = false;
    },
    close: async () => {
      shut = true;
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
