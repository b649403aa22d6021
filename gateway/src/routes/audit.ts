import { Router } from 'express';
import Joi from 'joi';
import { InvalidRequestError } from '@plinth/shared';
import type { AuditLog } from '../operators/audit-log';

const querySchema = Joi.object({
  actor: Joi.string().max(320),
  project: Joi.string().max(100),
  since: Joi.date().iso(),
  until: Joi.date().iso(),
  cursor: Joi.string().pattern(/^aud_[a-z0-9]{10,40}$/i).messages({ 'string.pattern.base': '"cursor" is not a cursor this API handed out' }),
  limit: Joi.number().integer().min(1).max(200).default(50),
});

/** `GET /audit`: the audit log, newest first, filtered, a page at a time (docs/operators.md "The audit log"). Any operator role. */
export function auditRoutes(deps: { audit: AuditLog }): Router {
  const r = Router();
  r.get('/audit', async (req, res) => {
    const { value, error } = querySchema.validate(req.query, { abortEarly: false });
    if (error) {
      throw new InvalidRequestError('Invalid query.', { fields: Object.fromEntries(error.details.map((d) => [d.path.join('.'), d.message])) });
    }
    const q = value as { actor?: string; project?: string; since?: Date; until?: Date; cursor?: string; limit: number };
    const entries = await deps.audit.query({
      actor: q.actor,
      project: q.project,
      since: q.since?.toISOString(),
      until: q.until?.toISOString(),
      before: q.cursor,
      limit: q.limit + 1,
    });
    const page = entries.slice(0, q.limit);
    res.json({ entries: page, next_cursor: entries.length > q.limit ? page[page.length - 1]!.id : null });
  });
  return r;
}
