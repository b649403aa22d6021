/**
 * The admin dashboard's static files (the `dashboard/` package, built into dashboard/dist) at
 * `/_/`, in standalone and cluster alike. Hashed assets are cached for a year; index.html is
 * never cached, so a new build is picked up at once. A strict Content-Security-Policy: only
 * this origin's scripts, styles, images and API/WebSocket connections, no inline script.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { Router, type RequestHandler } from 'express';
import { NotFoundError } from '@plinth/shared';

export const DASHBOARD_PATH = '/_';

/** Where the build lands: dashboard/dist at the repository root (from gateway/src or gateway/dist). */
export const DEFAULT_DASHBOARD_DIR = path.resolve(__dirname, '..', '..', 'dashboard', 'dist');

export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const strictHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
  res.setHeader('Referrer-Policy', 'no-referrer');
  next();
};

export function dashboardRoutes(dir: string = DEFAULT_DASHBOARD_DIR): Router {
  const r = Router();
  const index = path.join(dir, 'index.html');
  // Exactly `/_` (routing is not strict: a route for `/_` would also match `/_/`).
  r.use((req, res, next) => (req.path === DASHBOARD_PATH && req.method === 'GET' ? res.redirect(301, `${DASHBOARD_PATH}/`) : next()));
  r.use(`${DASHBOARD_PATH}/`, strictHeaders);
  r.use(
    `${DASHBOARD_PATH}/assets`,
    express.static(path.join(dir, 'assets'), { immutable: true, maxAge: '365d', index: false, fallthrough: true }),
  );
  r.get(`${DASHBOARD_PATH}/`, (_req, res, next) => {
    if (!existsSync(index)) {
      next(new NotFoundError('The dashboard is not built; run `npm run build`.'));
      return;
    }
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
  return r;
}
