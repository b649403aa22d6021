/**
 * The sections of a project archive, in archive order (archive-format.ts): collections, Auth
 * settings, records, users, then stored files (file-section.ts) and webhooks (webhook-section.ts). Each exports through the project's API with the run's secret key,
 * page by page, and imports in bounded batches — memory holds one page or one batch, never the
 * project.
 */
import { CliError } from '../client';
import { orderByRelations } from '../commands/relation-order';
import type { ArchiveContext, ArchiveLine, Section } from './archive-format';
import { files } from './file-section';
import { webhooks } from './webhook-section';

type Json = { [k: string]: unknown };

/** Records per `records:import` request (the server takes at most 1000) and bytes per request. */
const RECORD_BATCH = 500;
const USER_BATCH = 200;
const BATCH_BYTES = 512 * 1024;
const RECORD_PAGE = 1000;
const USER_PAGE = 500;

async function collectionNames(ctx: ArchiveContext): Promise<Json[]> {
  const r = await ctx.conn.ok<{ collections: Json[] }>('GET', ctx.path('/collections'), { key: ctx.secretKey });
  return r.collections;
}

/** Batches of lines sent together, cut by count and by bytes. */
function batcher(max: number, send: (items: Json[]) => Promise<void>) {
  let items: Json[] = [];
  let bytes = 0;
  const flush = async () => {
    if (items.length === 0) return;
    const out = items;
    items = [];
    bytes = 0;
    await send(out);
  };
  return {
    flush,
    async add(item: Json) {
      const size = JSON.stringify(item).length;
      if (items.length >= max || (items.length > 0 && bytes + size > BATCH_BYTES)) await flush();
      items.push(item);
      bytes += size;
    },
  };
}

const collections: Section = {
  name: 'collections',
  reads: ['collection'],
  async export(ctx, write) {
    const steps = (await collectionNames(ctx)).map((c) => ({ method: 'POST' as const, collection: String(c.name), body: { name: c.name, fields: c.fields, rules: c.rules } }));
    for (const step of orderByRelations(steps)) await write({ type: 'collection', collection: step.body });
    return steps.length;
  },
  importer(ctx) {
    let n = 0;
    return {
      async line(line) {
        await ctx.conn.ok('POST', ctx.path('/collections'), { key: ctx.secretKey, body: line.collection });
        n++;
      },
      async flush() {},
      count: () => n,
    };
  },
};

const authSettings: Section = {
  name: 'auth_settings',
  reads: ['auth_settings'],
  async export(ctx, write) {
    const { settings } = await ctx.conn.ok<{ settings: Json }>('GET', ctx.path('/auth/portability/settings'), { key: ctx.secretKey });
    await write({ type: 'auth_settings', sealed: ctx.key.seal('auth_settings', JSON.stringify(settings)) });
    return 1;
  },
  importer(ctx) {
    let n = 0;
    return {
      async line(line) {
        const settings = JSON.parse(ctx.key.open('auth_settings', String(line.sealed))) as Json;
        // Through the ordinary PATCH: every setting checked as when an operator sets it.
        await ctx.conn.ok('PATCH', ctx.path('/settings/auth'), { key: ctx.secretKey, body: settings });
        n++;
      },
      async flush() {},
      count: () => n,
    };
  },
};

const records: Section = {
  name: 'records',
  reads: ['record'],
  async export(ctx, write) {
    let n = 0;
    for (const c of await collectionNames(ctx)) {
      const name = String(c.name);
      const base = ctx.path(`/collections/${encodeURIComponent(name)}/records`);
      let cursor: string | null = null;
      do {
        const q = new URLSearchParams({ orderBy: 'id', limit: String(RECORD_PAGE), ...(cursor ? { cursor } : {}) });
        const page: { records: Json[]; cursor: string | null } = await ctx.conn.ok('GET', `${base}?${q}`, { key: ctx.secretKey });
        for (const record of page.records) await write({ type: 'record', collection: name, record });
        n += page.records.length;
        cursor = page.cursor;
      } while (cursor);
    }
    return n;
  },
  importer(ctx) {
    let n = 0;
    let current: string | null = null;
    const batch = batcher(RECORD_BATCH, async (items) => {
      const r = await ctx.conn.ok<{ imported: number; existing: number }>('POST', ctx.path(`/collections/${encodeURIComponent(current as string)}/records:import`), {
        key: ctx.secretKey,
        body: { records: items },
      });
      n += r.imported + r.existing;
    });
    return {
      async line(line) {
        const name = String(line.collection);
        if (current !== null && name !== current) await batch.flush();
        current = name;
        await batch.add(line.record as Json);
      },
      flush: () => batch.flush(),
      count: () => n,
    };
  },
};

const users: Section = {
  name: 'users',
  reads: ['user'],
  async export(ctx, write) {
    let n = 0;
    for (let offset = 0; ; offset += USER_PAGE) {
      const q = new URLSearchParams({ offset: String(offset), limit: String(USER_PAGE) });
      const page = await ctx.conn.ok<{ users: Json[]; total: number }>('GET', `${ctx.path('/auth/portability/users')}?${q}`, { key: ctx.secretKey });
      for (const u of page.users) {
        const mfa = u.mfa as Json | null;
        const sealed = mfa ? (({ secret, ...rest }) => ({ ...rest, secret_sealed: ctx.key.seal(`mfa:${String(u.id)}`, String(secret)) }))(mfa) : null;
        await write({ type: 'user', user: { ...u, mfa: sealed } });
      }
      n += page.users.length;
      if (page.users.length < USER_PAGE) break;
    }
    return n;
  },
  importer(ctx) {
    let n = 0;
    const batch = batcher(USER_BATCH, async (items) => {
      const r = await ctx.conn.ok<{ imported: number; existing: number }>('POST', ctx.path('/auth/portability/users'), { key: ctx.secretKey, body: { users: items } });
      n += r.imported + r.existing;
    });
    return {
      async line(line) {
        const u = line.user as Json;
        const mfa = u.mfa as Json | null;
        if (mfa && typeof mfa.secret_sealed !== 'string') throw new CliError('a user line has a second factor without its sealed secret: the archive is damaged');
        const opened = mfa ? (({ secret_sealed, ...rest }) => ({ ...rest, secret: ctx.key.open(`mfa:${String(u.id)}`, String(secret_sealed)) }))(mfa) : null;
        await batch.add({ ...u, mfa: opened });
      },
      flush: () => batch.flush(),
      count: () => n,
    };
  },
};

/**
 * Every section, in archive order. Files after records: a file's bytes are accepted only for a
 * record that names them. Webhooks last: the import's own writes are done before they exist.
 */
export const SECTIONS: readonly Section[] = [collections, authSettings, records, users, files, webhooks];

export type { ArchiveLine };
