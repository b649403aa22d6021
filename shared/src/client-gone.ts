import type { ServerResponse } from 'node:http';

/**
 * A signal that aborts when the client goes away before its answer is written (its connection
 * closed early), so that work still queued for it can be dropped before it starts
 * (AdmissionTicket.signal). Costs one listener on the response.
 */
export function clientGoneSignal(res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  return gone.signal;
}
