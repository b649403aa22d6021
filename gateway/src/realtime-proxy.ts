import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { UnavailableError } from '@plinth/shared';
import { answerUpgradeWithError, type UpgradeTarget } from './realtime-upgrade';
import { isUnreachableError, ReplicaPool, type ReplicaPoolOptions } from './replica-pool';
import { signRequest } from './upstreams';

/** Longest wait for a replica to answer an upgrade before it counts as unreachable. */
const UPGRADE_TIMEOUT_MS = 5000;

/** The HTTP head of an upstream answer, as written to the client's socket. */
function httpHead(line: string, headers: http.IncomingHttpHeaders): string {
  const lines = [line];
  for (const [k, v] of Object.entries(headers)) {
    for (const one of Array.isArray(v) ? v : [v]) if (one !== undefined) lines.push(`${k}: ${one}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * Cluster transport for WebSocket upgrades: round-robin across the usable realtime replicas
 * (`ReplicaPool`, as for HTTP: active `/readyz` checks, passive ejection). An upgrade whose
 * replica refuses, resets or does not answer the connection before the upgrade completes is
 * ejected and sent on to the next usable replica, each replica tried at most once, with a fresh
 * credential each time (a replica accepts a credential once). When none answers: 503.
 * Nothing of the upgrade has reached the client before it completes, so a retry is invisible.
 */
export function proxyUpgrade(
  service: string,
  targets: string[],
  logger: Logger,
  internalSecret: string,
  poolOptions: Partial<ReplicaPoolOptions> = {},
): UpgradeTarget & { close: () => void } {
  const pool = new ReplicaPool(targets, { service, logger, ...poolOptions });
  // Proxied WebSockets, so a shutdown can close them (the HTTP server does not track them).
  const open = new Set<Duplex>();

  const attempt = (req: http.IncomingMessage, socket: Duplex, head: Buffer, tried: Set<string>, last?: string): void => {
    const target = pool.pick(last);
    if (tried.has(target) || socket.destroyed) {
      const requestId = String(req.headers['x-request-id'] ?? '');
      if (!socket.destroyed) answerUpgradeWithError(socket, new UnavailableError(`The ${service} service is unavailable.`), requestId);
      return;
    }
    tried.add(target);
    signRequest(req, Buffer.alloc(0), internalSecret); // a fresh nonce per attempt
    const url = new URL(target);
    const upstream = http.request({
      host: url.hostname,
      port: url.port,
      method: req.method,
      path: req.url,
      headers: req.headers,
      agent: false,
    });
    let settled = false;
    const giveUp = () => upstream.destroy();
    socket.once('close', giveUp);
    upstream.setTimeout(UPGRADE_TIMEOUT_MS, () => upstream.destroy(Object.assign(new Error('upgrade timed out'), { code: 'ETIMEDOUT' })));
    upstream.on('error', (err) => {
      if (settled) return;
      settled = true;
      socket.off('close', giveUp);
      if (socket.destroyed) return; // the client left: nothing to retry, no replica to blame
      if (isUnreachableError(err)) {
        pool.eject(target, err);
        logger.info({ service, from: target, req_id: req.headers['x-request-id'] }, 'realtime upgrade: retrying on another replica');
        attempt(req, socket, head, tried, target);
        return;
      }
      logger.warn({ err, service, req_id: req.headers['x-request-id'] }, 'realtime upstream failed');
      socket.destroy();
    });
    // The replica answered without upgrading (a refusal): its answer goes to the client.
    upstream.on('response', (res) => {
      settled = true;
      pool.succeeded(target);
      socket.write(httpHead(`HTTP/${res.httpVersion} ${res.statusCode} ${res.statusMessage}`, res.headers));
      res.pipe(socket);
    });
    upstream.on('upgrade', (res, upSocket, upHead) => {
      settled = true;
      socket.off('close', giveUp);
      pool.succeeded(target);
      upSocket.setTimeout(0);
      upSocket.setNoDelay(true);
      upSocket.on('error', () => socket.destroy());
      socket.on('error', () => upSocket.destroy());
      upSocket.once('close', () => socket.destroy());
      socket.once('close', () => upSocket.destroy());
      if (upHead.length) upSocket.unshift(upHead);
      if (head.length) socket.unshift(head);
      socket.write(httpHead('HTTP/1.1 101 Switching Protocols', res.headers));
      upSocket.pipe(socket).pipe(upSocket);
    });
    upstream.end();
  };

  const upgrade = ((req, socket, head) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    attempt(req, socket, head, new Set());
  }) as UpgradeTarget & { close: () => void };
  upgrade.close = () => {
    pool.close();
    for (const s of open) s.destroy();
  };
  return upgrade;
}
