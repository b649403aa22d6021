import { isNetworkError } from '../errors';
import { sleep, uuid } from '../transport';
import type { CreateOptions } from './collection';
import type { RecordsContext } from './context';
import type { PlinthRecord } from './types';

/** One operation of `batch()`: what the single create, update or delete would take. */
export type BatchOperation =
  | { op: 'create'; collection: string; data: Record<string, unknown> }
  | { op: 'update'; collection: string; id: string; data: Record<string, unknown>; version?: number }
  | { op: 'delete'; collection: string; id: string; version?: number };

/** What each operation answers, in order: the record (create, update) or `{deleted, id}`. */
export type BatchResult = { record: PlinthRecord<Record<string, unknown>> } | { deleted: true; id: string };

/**
 * Writes every operation or none (`POST …/batch`, up to 100). A refusal rejects with the failing
 * operation's error, whose `details.index` names it. Like `create`, an `Idempotency-Key` is always
 * sent and a request that got no answer is sent again with it, so a retry never writes twice.
 */
export async function runBatch(ctx: RecordsContext, operations: BatchOperation[], opts: CreateOptions = {}): Promise<BatchResult[]> {
  const key = opts.idempotencyKey ?? uuid();
  const retries = opts.retries ?? 3;
  for (let attempt = 0; ; attempt++) {
    try {
      const token = await ctx.token(opts.signal);
      const res = await ctx.transport.request<{ results: BatchResult[] }>({
        method: 'POST',
        path: '/batch',
        body: { operations },
        headers: token ? { 'Idempotency-Key': key, 'X-Db-User-Token': token } : { 'Idempotency-Key': key },
        signal: opts.signal,
      });
      return res.results;
    } catch (err) {
      if (!isNetworkError(err) || attempt >= retries) throw err;
      await sleep(100 * 2 ** attempt * (0.5 + Math.random()), opts.signal);
    }
  }
}
