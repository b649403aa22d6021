import type { Logger } from 'pino';
import { asProjectId, type MailHandler } from '@plinth/shared';
import type { MailMetrics } from '../metrics/mail-metrics';
import { resolveMailSettings, type MailSettingsLookup, type ProjectMailSettings } from '../store/mail-settings';
import { renderMail } from '../templates/render';
import type { TemplateSource } from '../templates/template-source';
import type { Transport } from '../transport/transport';

export interface DeliveryDeps {
  transport: Transport;
  templates: TemplateSource;
  settings: MailSettingsLookup;
  defaults: ProjectMailSettings;
  metrics: MailMetrics;
  logger: Logger;
}

/**
 * The queue consumer: looks up the project's sender and link base, renders the job's template
 * and sends it. Any failure is rethrown so the queue retries it (or dead-letters it on the last
 * attempt). Logs carry the job id, never the token or code.
 */
export function createDeliveryHandler(deps: DeliveryDeps): MailHandler {
  return async (job, { attempt, attempts }) => {
    const log = { job_id: job.id, project: job.project, kind: job.kind, attempt, attempts };
    try {
      const project = asProjectId(job.project);
      const settings = await resolveMailSettings(deps.settings, deps.defaults, project);
      const template = await deps.templates.load(project, job.kind);
      await deps.transport.send(job, renderMail(job, settings, template));
    } catch (err) {
      const last = attempt >= attempts;
      if (last) deps.metrics.failed(job.kind);
      else deps.metrics.retried(job.kind);
      deps.logger.warn({ ...log, err }, last ? 'mail failed: dead-lettered' : 'mail attempt failed: will retry');
      throw err;
    }
    const latency = Math.max(0, (Date.now() - Date.parse(job.created_at)) / 1000);
    deps.metrics.sent(job.kind, deps.transport.name, latency);
    deps.logger.info(log, 'mail sent');
  };
}
