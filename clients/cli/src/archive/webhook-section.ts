/**
 * The webhooks section of a project archive, last so that the import's own writes are not
 * delivered: a `webhook` line per webhook — its definition (id, url, events, collections, enabled
 * state, times) with its signing secret sealed under the archive's passphrase:
 *
 *   {"type":"webhook", "webhook":{"id":"wh_…", "url":"https://…", "events":[…], "collections":null, "enabled":true, …, "secret_sealed":"…"}}
 *
 * Both sides go through operator-only endpoints (`…/webhooks/portability/export` and `/import`):
 * the source opens each secret from its key, the target seals it under its own, so receivers
 * verify deliveries from the new deployment with the secret they already have. Deliveries (the
 * history) do not move.
 */
import { CliError } from '../client';
import type { Section } from './archive-format';

type Json = { [k: string]: unknown };

export const webhooks: Section = {
  name: 'webhooks',
  reads: ['webhook'],
  async export(ctx, write) {
    const r = await ctx.conn.ok<{ webhooks: Json[] }>('POST', ctx.path('/webhooks/portability/export'), { key: ctx.conn.requireAdminKey() });
    for (const { secret, ...hook } of r.webhooks) {
      await write({ type: 'webhook', webhook: { ...hook, secret_sealed: ctx.key.seal(`webhook:${String(hook.id)}`, String(secret)) } });
    }
    return r.webhooks.length;
  },
  importer(ctx) {
    let n = 0;
    // A project has at most 20: they go in one request.
    let pending: Json[] = [];
    return {
      async line(line) {
        const { secret_sealed, ...hook } = (line.webhook ?? {}) as Json;
        if (typeof secret_sealed !== 'string') throw new CliError('a webhook line without its sealed signing secret: the archive is damaged');
        pending.push({ ...hook, secret: ctx.key.open(`webhook:${String(hook.id)}`, secret_sealed) });
      },
      async flush() {
        if (pending.length === 0) return;
        const body = { webhooks: pending };
        pending = [];
        const r = await ctx.conn.ok<{ imported: number; existing: number }>('POST', ctx.path('/webhooks/portability/import'), { key: ctx.conn.requireAdminKey(), body });
        n += r.imported + r.existing;
      },
      count: () => n,
    };
  },
};
