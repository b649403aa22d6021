import type { CreateIndexesOptions, IndexSpecification } from 'mongodb';
import { loadMongodb } from './mongo-client';

/** MongoDB refused an index because one of that name or keys exists with other options (codes 85, 86). */
export function isMongoIndexConflict(err: unknown): boolean {
  return err instanceof loadMongodb().MongoServerError && (err.code === 85 || err.code === 86);
}

/** What ensureMongoIndex needs of a collection (the driver's, or a test stand-in's). */
export interface MongoIndexable {
  createIndex(key: IndexSpecification, options: CreateIndexesOptions): Promise<string>;
  dropIndex(name: string): Promise<unknown>;
}

/** Creates an index; one of that name with other options (left by an older release) is replaced, not fatal. */
export async function ensureMongoIndex(c: MongoIndexable, key: IndexSpecification, options: CreateIndexesOptions & { name: string }): Promise<void> {
  try {
    await c.createIndex(key, options);
  } catch (err) {
    if (!isMongoIndexConflict(err)) throw err;
    await c.dropIndex(options.name);
    await c.createIndex(key, options);
  }
}
