import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import {
  INTERNAL_HEADERS,
  InternalError,
  InvalidRequestError,
  NotFoundError,
  PlinthError,
  UnavailableError,
  acceptRequestId,
  isProjectId,
  type ProjectId,
} from '@plinth/shared';
import type { KeyAuthenticator } from './key-authenticator';
import { bearer } from './keys';
import { RealtimeSockets } from './realtime-sockets';

/** `GET /v1/projects/{p}/realtime` (docs/realtime.md). */
export const REALTIME_ROUTE = /^\/v1\/projects\/([^/]+)\/realtime$/;

/** Where accepted upgrades go: the in-process realtime service, or a proxy to its replicas. */
export type UpgradeTarget = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** Writes an error envelope as the HTTP answer to an upgrade request and closes the socket. */
export function answerUpgradeWithError(socket: Duplex, err: PlinthError, requestId: string): void {
  const body = JSON.stringify(err.toEnvelope());
  socket.end(
    `HTTP/1.1 ${err.status} ${err.code}\r\nContent-Type: application/json; charset=utf-8\r\nX-Request-Id: ${requestId}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * The client's address behind `trustProxy` (express's "trust proxy" as a hop count or true):
 * the socket's peer, or the X-Forwarded-For entry that many hops back — what `req.ip` is for
 * HTTP routes. The realtime service counts public-key connections per address with it.
 */
export function clientAddress(req: IncomingMessage, trustProxy: number | boolean): string {
  const forwarded = String(req.headers['x-forwarded-for'] ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean)
    .reverse();
  const chain = [req.socket.remoteAddress ?? 'unknown', ...forwarded];
  const hops = trustProxy === true ? chain.length - 1 : Math.min(Number(trustProxy) || 0, chain.length - 1);
  return chain[hops]!.slice(0, 64);
}

/**
 * The gateway's handler for HTTP upgrades. Only the realtime route upgrades. The project key
 * comes from `Authorization: Bearer` (either kind) or, for browsers, `?key=` — public keys only:
 * a secret key in a URL is refused (400), since URLs end up in logs and histories. After the key
 * check the identity headers are set exactly as for HTTP routes and the upgrade is handed on.
 */
export function realtimeUpgradeHandler(opts: {
  keys: KeyAuthenticator;
  /** Whether the project exists (a key that stops authenticating with its project: see RealtimeSockets). */
  projectExists: (project: ProjectId) => Promise<boolean>;
  target?: UpgradeTarget;
  logger: Logger;
  trustProxy?: number | boolean;
}): UpgradeTarget {
  const open = new RealtimeSockets(opts.keys, opts.projectExists, opts.logger);
  const accept = async (req: IncomingMessage, socket: Duplex, head: Buffer, requestId: string): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://gateway.invalid');
    const m = REALTIME_ROUTE.exec(url.pathname);
    if (!m || !isProjectId(m[1]!)) throw new NotFoundError('Unknown route.');
    const project = m[1]!;
    if (!opts.target) throw new UnavailableError('Realtime is not configured on this gateway (REALTIME_URL).');
    const fromHeader = bearer(req.headers.authorization);
    const fromQuery = url.searchParams.get('key');
    if (!fromHeader && fromQuery?.startsWith('sk_')) {
      throw new InvalidRequestError('A secret key may not be sent in the URL; use a public key in ?key= or the Authorization header.', {
        field: 'key',
      });
    }
    const credential = fromHeader ?? fromQuery;
    const keyKind = await opts.keys.authenticate(project, credential);
    if (!fromHeader && keyKind === 'secret') {
      throw new InvalidRequestError('A secret key may not be sent in the URL; use a public key in ?key= or the Authorization header.', {
        field: 'key',
      });
    }
    const h = req.headers;
    delete h[INTERNAL_HEADERS.credential];
    // A client's copy must not be signed as the gateway's; the realtime service reads the address.
    delete h[INTERNAL_HEADERS.keyId];
    delete h[INTERNAL_HEADERS.clientAddress];
    h[INTERNAL_HEADERS.project] = project;
    h[INTERNAL_HEADERS.keyKind] = keyKind;
    h[INTERNAL_HEADERS.requestId] = requestId;
    h[INTERNAL_HEADERS.clientAddress] = clientAddress(req, opts.trustProxy ?? false);
    // The key must not travel further than the gateway.
    delete h.authorization;
    url.searchParams.delete('key');
    req.url = url.pathname + (url.search === '?' ? '' : url.search);
    // A key revoked later cuts this socket (realtime-sockets.ts).
    open.add(credential!, project as ProjectId, socket);
    opts.target(req, socket, head);
  };
  return (req, socket, head) => {
    const requestId = acceptRequestId(req.headers['x-request-id']) ?? randomUUID();
    socket.on('error', () => {});
    accept(req, socket, head, requestId).catch((err: unknown) => {
      if (!(err instanceof PlinthError)) opts.logger.error({ err, req_id: requestId }, 'upgrade failed');
      answerUpgradeWithError(socket, err instanceof PlinthError ? err : new InternalError(), requestId);
    });
  };
}
