/**
 * A project's webhooks moved with it (`plinth projects export` / `import`, docs/operators.md
 * "Moving a project"): the definitions with their signing secrets, opened from this deployment's
 * key on export and sealed under the target's key on import — so receivers keep verifying with
 * the secret they were given when the webhook was made. The same ids, url, events, collections,
 * enabled state and times; the failure run starts again at 0 and deliveries do not move.
 * Operators only (webhook-routes.ts): the answer of an export holds every secret in the clear.
 */
import type { Webhook } from '@plinth/protocol';
import { ConflictError, InvalidRequestError, type ProjectId } from '@plinth/shared';
import { MAX_WEBHOOKS, type WebhookAdmin } from './webhook-admin';
import type { WebhookSecrets } from './webhook-secrets';
import type { StoredWebhook, WebhookStore } from './webhook-store';

/** A webhook as an archive carries it: the definition and its signing secret. */
export type PortableWebhook = Pick<Webhook, 'id' | 'url' | 'events' | 'collections' | 'enabled' | 'disabled_reason' | 'created_at' | 'updated_at'> & { secret: string };

const ID = /^wh_[0-9a-z]{26}$/;
const SECRET = /^whsec_[A-Za-z0-9+/]{16,256}={0,2}$/;
const KEYS = ['id', 'url', 'events', 'collections', 'enabled', 'disabled_reason', 'created_at', 'updated_at', 'secret'];

function timestamp(v: unknown, field: string): string {
  if (typeof v !== 'string' || v.length > 40 || Number.isNaN(Date.parse(v))) throw new InvalidRequestError(`"${field}" must be an ISO 8601 timestamp.`, { field });
  return v;
}

export class WebhookPortability {
  constructor(
    private readonly store: WebhookStore,
    private readonly secrets: WebhookSecrets,
    private readonly admin: WebhookAdmin,
  ) {}

  /** Every webhook of the project with its secret opened. */
  async export(project: ProjectId): Promise<PortableWebhook[]> {
    return (await this.store.list(project)).map((h) => {
      const secret = this.secrets.open(project, h.id, h.secret);
      if (secret === null) throw new ConflictError(`The signing secret of webhook ${h.id} does not open with this deployment's key (was PLINTH_WEBHOOK_KEY changed?): it cannot be exported.`, { id: h.id });
      const { id, url, events, collections, enabled, disabled_reason, created_at, updated_at } = h;
      return { id, url, events, collections, enabled, disabled_reason, created_at, updated_at, secret };
    });
  }

  private parse(project: ProjectId, raw: unknown, index: number): StoredWebhook {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new InvalidRequestError(`webhooks[${index}] must be an object.`, { index });
    const b = raw as { [k: string]: unknown };
    const extra = Object.keys(b).find((k) => !KEYS.includes(k));
    if (extra !== undefined) throw new InvalidRequestError(`webhooks[${index}]: unknown field "${extra.slice(0, 64)}".`, { index, field: extra.slice(0, 64) });
    if (typeof b.id !== 'string' || !ID.test(b.id)) throw new InvalidRequestError(`webhooks[${index}].id must be a webhook id (wh_…).`, { index, field: 'id' });
    if (typeof b.secret !== 'string' || !SECRET.test(b.secret)) throw new InvalidRequestError(`webhooks[${index}].secret must be a signing secret (whsec_…).`, { index, field: 'secret' });
    if (typeof b.enabled !== 'boolean') throw new InvalidRequestError(`webhooks[${index}].enabled must be true or false.`, { index, field: 'enabled' });
    if (b.disabled_reason !== null && (typeof b.disabled_reason !== 'string' || b.disabled_reason.length > 200)) {
      throw new InvalidRequestError(`webhooks[${index}].disabled_reason must be null or a string of at most 200 characters.`, { index, field: 'disabled_reason' });
    }
    return {
      id: b.id,
      project,
      url: this.admin.checkUrl(b.url),
      events: this.admin.checkEvents(b.events),
      collections: this.admin.checkCollections(b.collections),
      secret: this.secrets.seal(project, b.id, b.secret),
      enabled: b.enabled,
      disabled_reason: b.disabled_reason as string | null,
      consecutive_failures: 0,
      created_at: timestamp(b.created_at, 'created_at'),
      updated_at: timestamp(b.updated_at, 'updated_at'),
      // It takes the changes committed here from its import on.
      enabled_at: new Date().toISOString(),
    };
  }

  /**
   * Stores the webhooks of an archive, their secrets sealed under this deployment's key; one
   * already here (same id) is left as it is and counted `existing`. Every webhook is checked
   * before any is stored.
   */
  async import(project: ProjectId, body: unknown): Promise<{ imported: number; existing: number }> {
    const list = typeof body === 'object' && body !== null ? (body as { webhooks?: unknown }).webhooks : undefined;
    if (!Array.isArray(list) || list.length > MAX_WEBHOOKS || Object.keys(body as object).length !== 1) {
      throw new InvalidRequestError(`The body must be {"webhooks": [...]} with at most ${MAX_WEBHOOKS} webhooks.`, { field: 'webhooks' });
    }
    const hooks = list.map((raw, i) => this.parse(project, raw, i));
    if (new Set(hooks.map((h) => h.id)).size !== hooks.length) throw new InvalidRequestError('A webhook id is there twice.', { field: 'webhooks' });
    const fresh: StoredWebhook[] = [];
    for (const h of hooks) if (!(await this.store.get(project, h.id))) fresh.push(h);
    if ((await this.store.count(project)) + fresh.length > MAX_WEBHOOKS) throw new InvalidRequestError(`A project has at most ${MAX_WEBHOOKS} webhooks.`);
    for (const h of fresh) await this.store.insert(h);
    return { imported: fresh.length, existing: hooks.length - fresh.length };
  }
}
