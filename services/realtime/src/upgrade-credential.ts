import type { IncomingMessage } from 'node:http';
import { claimShared, ReplayGuard, verifyInternal, type InternalIdentity, type NonceStore } from '@plinth/shared';

/** What the check says of an upgrade's credential. */
export type UpgradeCredentialCheck = 'accepted' | 'refused' | 'unavailable';

/**
 * The gateway's signature over a WebSocket upgrade (method and path), accepted once: on this
 * replica (its own ReplayGuard) and, in cluster mode, across every replica (the shared nonce
 * store in Redis), so a captured upgrade request cannot be replayed on another replica. While
 * the store cannot answer, only a credential made in the last few seconds is accepted
 * (`unavailable` otherwise), as for the other services.
 */
export class UpgradeCredentials {
  private readonly replay = new ReplayGuard();

  constructor(
    private readonly secret: string,
    private readonly shared?: NonceStore,
  ) {}

  async check(req: IncomingMessage, credential: unknown, id: InternalIdentity): Promise<UpgradeCredentialCheck> {
    if (typeof credential !== 'string') return 'refused';
    const verified = verifyInternal(this.secret, credential, id, { method: req.method ?? 'GET', path: req.url ?? '/' });
    if (verified === null || !this.replay.accept(verified)) return 'refused';
    if (!this.shared) return 'accepted';
    const claim = await claimShared(this.shared, verified);
    return claim === 'first' ? 'accepted' : claim === 'replayed' ? 'refused' : 'unavailable';
  }
}
