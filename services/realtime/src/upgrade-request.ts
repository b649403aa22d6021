import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { optionalIdentity, type PlinthError } from '@plinth/shared';

/**
 * The client's address, as the gateway saw it (`X-Plinth-Client-Address`, behind its trusted
 * proxies), else the socket's peer.
 */
export function clientAddress(req: IncomingMessage): string {
  return optionalIdentity(req.headers)?.clientAddress ?? req.socket.remoteAddress ?? 'unknown';
}

/** The path a client connects to (the gateway forwards it unchanged). */
export const REALTIME_PATH = /^\/v1\/projects\/([^/?]+)\/realtime(?:\?.*)?$/;

/** Answers an upgrade request with a plain HTTP error in the envelope, and closes the socket. */
export function refuseUpgrade(socket: Duplex, err: PlinthError): void {
  const body = JSON.stringify(err.toEnvelope());
  socket.end(
    `HTTP/1.1 ${err.status} ${err.code}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
