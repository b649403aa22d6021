/** Fires once when an access token's `exp` passes: the point where a connection's token-shaped subscriptions pause. */
export class TokenExpiry {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly onExpire: () => void) {}

  /** Arms for `exp` (seconds since the epoch), replacing any earlier one; without `exp`, only disarms. */
  arm(exp: number | null | undefined): void {
    this.clear();
    if (!exp) return;
    this.timer = setTimeout(this.onExpire, Math.max(0, exp * 1000 - Date.now()));
    this.timer.unref?.();
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
