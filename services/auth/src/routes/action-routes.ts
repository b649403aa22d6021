import { Router, type Response } from 'express';
import { PlinthError, requestContext, type ProjectId } from '@plinth/shared';
import { ACTION_PAGE_CSP, renderActionPage, type ActionView } from '../domain/action-page';
import { MAX_PASSWORD_BYTES } from '../domain/validation';
import type { AuthContext, Requester } from '../flows/auth-context';
import { confirmEmailChange } from '../flows/self-service';
import { confirmVerification, resetPassword } from '../flows/verification';
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
  return null;
}

async function perform(
  ctx: AuthContext,
  project: ProjectId,
  type: string,
  token: string,
  body: { [k: string]: unknown },
  by: Requester,
): Promise<[number, ActionView]> {
  try {
    if (type === 'verify') {
      await confirmVerification(ctx, project, token);
      return [200, { kind: 'done', title: 'E-mail address confirmed', message: 'Your e-mail address is confirmed. You can close this page.' }];
    }
    if (type === 'email-change') {
      const user = await confirmEmailChange(ctx, project, token);
      return [200, { kind: 'done', title: 'E-mail address changed', message: `Your account now uses ${user.email}. You can close this page.` }];
    }
    const password = str(body.password);
    const bytes = Buffer.byteLength(password, 'utf8');
    if (password !== str(body.confirm)) return [400, { kind: 'reset-form', token, error: 'The two passwords differ. Type the same password twice.' }];
    if (bytes < 8 || bytes > MAX_PASSWORD_BYTES) return [400, { kind: 'reset-form', token, error: 'The password must be 8 to 72 bytes long.' }];
    await resetPassword(ctx, project, token, password, by);
    return [200, { kind: 'done', title: 'Password changed', message: 'Your new password is set, and every session was signed out. Sign in with the new password.' }];
  } catch (err) {
    if (err instanceof PlinthError && err.status < 500) {
      const title = err.code === 'conflict' ? 'Address already in use' : 'Link not valid';
      const message = err.code === 'conflict' ? 'Another account uses this address now; the change was not made.' : EXPIRED;
      return [err.status, { kind: 'failed', title, message }];
    }
    throw err;
  }
}

/**
 * The hosted action pages (docs/auth.md "Hosted action pages"): where verification, reset and
 * e-mail-change links lead when the project sets no `redirect_url`. `GET` shows a form (nothing
 * happens on GET, so mail scanners that open links change nothing); `POST` performs the action
 * and shows the result. No project key: the token in the link is the credential. Plain HTML
 * forms, no script, a strict CSP.
 */
export function actionRoutes(ctx: AuthContext): Router {
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

  r.post(path, async (req, res) => {
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
