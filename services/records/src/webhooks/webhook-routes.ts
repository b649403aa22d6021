import { Router, type Request } from 'express';
import { requireOperator, requireSecretKey, sendJson } from '@plinth/shared';
import type { WebhookAdmin } from './webhook-admin';
import type { WebhookPortability } from './webhook-portability';

const WEBHOOKS = '/v1/projects/:project/webhooks';
const WEBHOOK = `${WEBHOOKS}/:id`;
const DELIVERIES = `${WEBHOOK}/deliveries`;

const param = (req: Request, name: string): string => String(req.params[name]);

/**
 * The webhook API (docs/webhooks.md): every route needs the project's secret key — but those that
 * move a project's webhooks with their secrets (`…/webhooks/portability/export` and `/import`),
 * which need an operator (POST, so the gateway asks for the admin role and audits them).
 */
export function webhookRoutes(admin: WebhookAdmin, portability: WebhookPortability): Router {
  const router = Router();
  router.post(`${WEBHOOKS}/portability/export`, async (req, res) => {
    const { project } = requireOperator(res);
    sendJson(req, res, 200, { webhooks: await portability.export(project) });
  });
  router.post(`${WEBHOOKS}/portability/import`, async (req, res) => {
    const { project } = requireOperator(res);
    sendJson(req, res, 200, await portability.import(project, req.body));
  });
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
