import { Router, type Response } from 'express';
import { PlinthError, requestContext, type ProjectId } from '@plinth/shared';
import { ACTION_PAGE_CSP, renderActionPage, type ActionView } from '../domain/action-page';
import { MAX_PASSWORD_BYTES } from '../domain/validation';
import type { AuthContext, Requester } from '../flows/auth-context';
import { cancelEmailChange, confirmEmailChange } from '../flows/email-change';
import { confirmVerification, resetPassword, type AddressConfirmed } from '../flows/verification';
import type { RateLimits } from './rate-limits';
import { anonymousRequester } from './requester';

const EXPIRED = 'This link is invalid, expired or already used. Ask for a new one from the app.';

function send(res: Response, status: number, project: string, view: ActionView): void {
  res
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': ACTION_PAGE_CSP,
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
      'X-Content-Type-Options': 'nosniff',
    })
    .send(renderActionPage(project, view));
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The form a link of this type opens, or null for an unknown type / missing token. */
function formFor(type: string, token: string): ActionView | null {
  if (!token || token.length > 200) return null;
  if (type === 'verify') return { kind: 'verify-form', token };
  if (type === 'reset') return { kind: 'reset-form', token };
  if (type === 'email-change') return { kind: 'email-change-form', token };
  if (type === 'email-change-cancel') return { kind: 'email-change-cancel-form', token };
  return null;
}

/** What a confirmation page says after an address was confirmed, naming what else changed. */
function confirmedMessage(first: string, done: AddressConfirmed): string {
  return done.took_over
    ? `${first} The account is yours now: any password set before was removed and every session was signed out. Sign in with a code, or set a password with "forgot password".`
    : `${first} You can close this page.`;
}

/** A confirmation form again, with the reason its password was refused. */
function refusedProof(type: string, token: string): ActionView {
  const error = 'This password is not the password of this account. Type the right one, or leave the field empty.';
  return type === 'verify' ? { kind: 'verify-form', token, error } : { kind: 'email-change-form', token, error };
}

async function perform(
  ctx: AuthContext,
  project: ProjectId,
  type: string,
  token: string,
  body: { [k: string]: unknown },
  by: Requester,
): Promise<[number, ActionView]> {
  const password = str(body.password);
  try {
    // An empty password field means no proof (the page's field is optional); an overlong one is
    // a wrong proof, cut to a length that can only fail.
    const proof = { password: password === '' ? undefined : password.slice(0, 1025) };
    if (type === 'verify') {
      const done = await confirmVerification(ctx, project, token, proof, by);
      return [200, { kind: 'done', title: 'E-mail address confirmed', message: confirmedMessage('Your e-mail address is confirmed.', done) }];
    }
    if (type === 'email-change') {
      const done = await confirmEmailChange(ctx, project, token, proof, by);
      return [200, { kind: 'done', title: 'E-mail address changed', message: confirmedMessage(`Your account now uses ${done.user.email}.`, done) }];
    }
    if (type === 'email-change-cancel') {
      await cancelEmailChange(ctx, project, token);
      return [200, { kind: 'done', title: 'E-mail change cancelled', message: 'The change of your e-mail address is cancelled and every session was signed out. If you did not ask for it, change your password.' }];
    }
    const bytes = Buffer.byteLength(password, 'utf8');
    if (password !== str(body.confirm)) return [400, { kind: 'reset-form', token, error: 'The two passwords differ. Type the same password twice.' }];
    if (bytes < 8 || bytes > MAX_PASSWORD_BYTES) return [400, { kind: 'reset-form', token, error: 'The password must be 8 to 72 bytes long.' }];
    await resetPassword(ctx, project, token, password, by);
    return [200, { kind: 'done', title: 'Password changed', message: 'Your new password is set, and every session was signed out. Sign in with the new password.' }];
  } catch (err) {
    if (err instanceof PlinthError && err.code === 'forbidden') return [403, refusedProof(type, token)];
    if (err instanceof PlinthError && err.status < 500) {
      const title = err.code === 'conflict' ? 'Address already in use' : 'Link not valid';
      const message = err.code === 'conflict' ? 'Another account uses this address now; the change was not made.' : EXPIRED;
      return [err.status, { kind: 'failed', title, message }];
    }
    throw err;
  }
}

/**
 * The hosted action pages (docs/auth.md "Hosted action pages"): where verification, reset,
 * e-mail-change and change-cancel links lead when the project sets no `redirect_url`. `GET` shows a form (nothing
 * happens on GET, so mail scanners that open links change nothing); `POST` performs the action
 * and shows the result. No project key: the token in the link is the credential. Plain HTML
 * forms, no script, a strict CSP.
 */
export function actionRoutes(ctx: AuthContext, rateLimits: RateLimits): Router {
  const r = Router();
  const path = '/v1/projects/:project/auth/action';

  r.get(path, async (req, res) => {
    const { project } = requestContext(res);
    if (!(await ctx.settings.get(project)).enabled) {
      send(res, 404, project, { kind: 'failed', title: 'Not available', message: 'Accounts are not enabled for this project.' });
      return;
    }
    const form = formFor(str(req.query.type), str(req.query.token));
    if (!form) send(res, 400, project, { kind: 'failed', title: 'Link not valid', message: EXPIRED });
    else send(res, 200, project, form);
  });

  // Forms may carry the account's password: limited per IP like the other endpoints that check one.
  r.post(path, ...rateLimits.endpoints.account, async (req, res) => {
    const { project } = requestContext(res);
    const body = (req.body ?? {}) as { [k: string]: unknown };
    if (!(await ctx.settings.get(project)).enabled) {
      send(res, 404, project, { kind: 'failed', title: 'Not available', message: 'Accounts are not enabled for this project.' });
      return;
    }
    const type = str(body.type);
    const token = str(body.token);
    if (!formFor(type, token)) {
      send(res, 400, project, { kind: 'failed', title: 'Link not valid', message: EXPIRED });
      return;
    }
    const [status, view] = await perform(ctx, project, type, token, body, anonymousRequester(req, res));
    send(res, status, project, view);
  });

  return r;
}
