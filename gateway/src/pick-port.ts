import net from 'node:net';

/** A port nobody listens on right now on `host` (the OS picks it; released for the caller to bind). */
export async function pickPort(host = '127.0.0.1'): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, host, resolve);
  });
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}
