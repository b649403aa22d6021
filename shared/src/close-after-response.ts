import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How long a refused upload's connection stays half-open after its answer, unread, before it is dropped. */
export const LINGER_MS = 2_000;

/**
 * After a request was refused before its body was read (an upload past its limit): answer with
 * `Connection: close`, send the answer, stop reading, and drop the connection `LINGER_MS` later —
 * so the rest of the body is never read, and the peer still gets the answer.
 *
 * Why not drop it at once: closing a socket whose receive buffer holds unread bytes makes the
 * kernel send a reset instead of a graceful close, and a peer that had not yet read the answer
 * (a client busy writing, the gateway's proxy mid-body) then sees ECONNRESET and loses it — the
 * gateway answered 503 instead of relaying a 413. Node's own end of a `Connection: close`
 * response (`socket.destroySoon`) does exactly that; here it only half-closes (FIN after the
 * answer) and the reset comes once the peer had time to read. The unread body waits in socket
 * buffers meanwhile (their size, not the upload's), and the peer cannot send more.
 */
export function closeAfterResponse(res: ServerResponse, lingerMs = LINGER_MS): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
  const socket = res.socket;
  if (!socket || socket.destroyed) return;
  const linger = (s: Socket): void => {
    s.pause();
    if (!s.writableEnded) s.end();
    setTimeout(() => s.destroy(), lingerMs).unref();
  };
  // The http server ends the socket of a `Connection: close` answer with destroySoon once the
  // answer is written; lingering replaces that for this one socket.
  (socket as Socket & { destroySoon: () => void }).destroySoon = () => linger(socket);
  res.once('finish', () => {
    if (!socket.destroyed && !socket.writableEnded) linger(socket);
  });
}
