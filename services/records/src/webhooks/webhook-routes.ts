import { Router, type Request } from 'express';
import { requireSecretKey, sendJson } from '@plinth/shared';
import type { WebhookAdmin } from './webhook-admin';

const WEBHOOKS = '/v1/projects/:project/webhooks';
const WEBHOOK = `${WEBHOOKS}/:id`;
const DELIVERIES = `${WEBHOOK}/deliveries`;

const param = (req: Request, name: string): string => String(req.params[name]);

/** The webhook API (docs/webhooks.md): every route needs the project's secret key. */
export function webhookRoutes(admin: WebhookAdmin): Router {
  const router = Router();
  router.post(WEBHOOKS, async (req, res) => {
    const { project } = requireSecretKey(res);
    sendJson(req, res, 201, { webhook: await admin.create(project, req.body) });
  });
  router.get(WEBHOOKS, async (req, res) => {
    const { project } = requireSecretKey(res);
    sendJson(req, res, 200, { webhooks: await admin.list(project) });
  });
  router.get(WEBHOOK, async (req, res) => {
    const { project } = requireSecretKey(res);
    sendJson(req, res, 200, { webhook: await admin.get(project, param(req, 'id')) });
  });
  router.patch(WEBHOOK, async (req, res) => {
    const { project } = requireSecretKey(res);
    sendJson(req, res, 200, { webhook: await admin.update(project, param(req, 'id'), req.body) });
  });
  router.delete(WEBHOOK, async (req, res) => {
    const { project } = requireSecretKey(res);
    await admin.delete(project, param(req, 'id'));
    sendJson(req, res, 200, { deleted: true, id: param(req, 'id') });
  });
  router.get(DELIVERIES, async (req, res) => {
    const { project } = requireSecretKey(res);
    sendJson(req, res, 200, { deliveries: await admin.deliveries(project, param(req, 'id'), req.query as { [key: string]: unknown }) });
  });
  router.post(`${DELIVERIES}/:delivery/replay`, async (req, res) => {
    const { project } = requireSecretKey(res);
    sendJson(req, res, 202, { delivery: await admin.replay(project, param(req, 'id'), param(req, 'delivery')) });
  });
  return router;
}
