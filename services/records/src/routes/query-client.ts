import type { Request, Response } from 'express';
import { requestContext, type KeyKind } from '@plinth/shared';
import type { AuthInfo } from '../domain/access-policy';
import type { QueryClient } from '../store/record-store';

/**
 * Who a query is for, for fair share between callers (record-store.ts, QueryClient): the
 * signed-in user, else the secret key, else the anonymous client's address (as the gateway
 * trusts it); with a signal that aborts when the client goes away before the answer is sent, so
 * a query still waiting for a reader is dropped.
 */
export function queryClient(_req: Request, res: Response, keyKind: KeyKind, auth: AuthInfo | null): QueryClient {
  const ctx = requestContext(res);
  const id = clientId(keyKind, auth, ctx.clientAddress ?? 'unknown', ctx.keyId);
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  return { id, signal: gone.signal };
}

/** The share a caller's queries wait in: the user, else the secret key, else the address. */
export function clientId(keyKind: KeyKind, auth: AuthInfo | null, address: string, keyId?: string): string {
  return auth ? `user:${auth.uid}` : keyKind === 'secret' ? `key:${keyId ?? 'secret'}` : `address:${address}`;
}
