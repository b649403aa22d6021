import type { Request, Response } from 'express';

/**
 * Answers `body` as JSON with `status`: the bytes, headers and HEAD handling of express's
 * `res.status(status).json(body)` (no ETag: the apps turn it off), without its per-call setting
 * lookups, charset rewriting and freshness check — a measurable share of a cheap API request.
 */
export function sendJson(req: Request, res: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  if (req.method === 'HEAD') res.end();
  else res.end(text);
}
