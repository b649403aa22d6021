import { Router } from 'express';
import { MAIL_JOB_ID_PATTERN, NotFoundError, requireSecretKey, type FailedMailJob, type MailQueue } from '@plinth/shared';

/** A dead letter as the API shows it: everything but the token or code. */
export interface FailedMailView {
  id: string;
  kind: string;
  to: string;
  attempts: number;
  error: string;
  created_at: string;
  failed_at: string;
}

export function failedMailView(failed: FailedMailJob): FailedMailView {
  const { job } = failed;
  return {
    id: job.id,
    kind: job.kind,
    to: job.to,
    attempts: failed.attempts,
    error: failed.error,
    created_at: job.created_at,
    failed_at: failed.failed_at,
  };
}

/**
 * Dead letters (secret key): `GET /v1/projects/:project/mail/failed` → `{jobs}` newest failure
 * first; `POST /v1/projects/:project/mail/failed/:id/retry` → `{retried:true, id}`, or 404.
 */
export function deadLetterRoutes(queue: MailQueue): Router {
  const router = Router();
  router.get('/v1/projects/:project/mail/failed', async (_req, res) => {
    const { project } = requireSecretKey(res);
    const failed = await queue.listFailed(project);
    res.json({ jobs: failed.map(failedMailView) });
  });
  router.post('/v1/projects/:project/mail/failed/:id/retry', async (req, res) => {
    const { project } = requireSecretKey(res);
    const id = String(req.params.id);
    if (!MAIL_JOB_ID_PATTERN.test(id)) throw new NotFoundError(`No failed mail job ${id}.`, { id });
    await queue.retryFailed(project, id);
    res.json({ retried: true, id });
  });
  return router;
}
