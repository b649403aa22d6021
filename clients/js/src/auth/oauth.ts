import { PlinthError } from '../errors';

/** How `signInWithOAuth` sends the user to the provider. */
export interface OAuthOptions {
  /** Where the browser comes back (one of the project's `redirect_urls`). Default: this page, without query or fragment. */
  redirectTo?: string;
  /**
   * `redirect` (default): this tab goes to the provider; call `completeOAuthRedirect()` on the
   * page it comes back to. `popup`: a popup goes there, and the promise resolves with the
   * session once the popup is back on `redirectTo` (which must be of this page's origin).
   */
  mode?: 'redirect' | 'popup';
  /** Popup mode: give up after this many ms (default 5 minutes). */
  timeoutMs?: number;
}

/** The parts of a browser window a provider sign-in uses (the SDK also builds without the DOM types). */
interface PopupWindow {
  closed: boolean;
  close(): void;
  location: { href: string };
}
export interface BrowserWindow {
  location: { href: string; assign(url: string): void };
  history: { replaceState(data: unknown, unused: string, url: string): void };
  open(url: string, target: string, features: string): PopupWindow | null;
}

/** The browser window; a clear error outside a browser. */
export function browserWindow(): BrowserWindow {
  const w = (globalThis as { window?: BrowserWindow }).window;
  if (!w) throw new PlinthError({ status: 0, code: 'invalid_request', message: 'This needs a browser window; elsewhere use exchangeOAuthCode.' });
  return w;
}

/** A linked provider account (`auth.identities()`). */
export interface Identity {
  provider: string;
  subject: string;
  email: string | null;
  email_verified: boolean;
  created_at: string;
}

/** The code or error the callback put on the app's address; null when it carries neither. */
export function oauthResult(url: string): { code: string } | { error: string; description: string } | null {
  const q = new URL(url).searchParams;
  const error = q.get('error');
  if (error) return { error, description: q.get('error_description') ?? error };
  const code = q.get('code');
  return code ? { code } : null;
}

/** `url` without the sign-in's `code`, `error` and `error_description` (for history.replaceState). */
export function withoutOAuthResult(url: string): string {
  const u = new URL(url);
  for (const k of ['code', 'error', 'error_description']) u.searchParams.delete(k);
  return u.href;
}

/** The error a sign-in came back with, as a PlinthError (`account_exists`, `oauth_failed`, …; docs/auth.md). */
export function oauthError(error: string, description: string): PlinthError {
  return new PlinthError({ status: error === 'account_exists' ? 409 : 400, code: error, message: description });
}

/**
 * Opens `url` in a popup and waits until it is back on `redirectTo` (same origin as this page),
 * then closes it and answers its address. Rejects when the popup is blocked, closed or too slow.
 */
export function waitForPopup(url: string, redirectTo: string, timeoutMs: number): Promise<string> {
  const popup = browserWindow().open(url, 'plinth-oauth', 'popup,width=520,height=680');
  if (!popup) return Promise.reject(new PlinthError({ status: 0, code: 'popup_blocked', message: 'The browser blocked the sign-in popup.' }));
  const target = new URL(redirectTo);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const timer = setInterval(() => {
      let href = '';
      try {
        // Reading another origin's address throws until the popup is back on ours.
        href = popup.location.href;
      } catch {
        // at the provider
      }
      const back = href && new URL(href).origin === target.origin && new URL(href).pathname === target.pathname;
      if (back || popup.closed || Date.now() - started > timeoutMs) {
        clearInterval(timer);
        if (!popup.closed) popup.close();
        if (back) resolve(href);
        else reject(new PlinthError({ status: 0, code: 'popup_closed', message: 'The sign-in popup was closed before it finished.' }));
      }
    }, 250);
  });
}
