/**
 * The shapes of what the mingo stand-in's collections accept (mingo-db.ts): documents, index
 * specifications and the options of reads and writes — the subset of the driver's our adapters use.
 */
import { MongoInvalidArgumentError, type Document } from 'mongodb';
import type { Sort } from './mingo-cursor';
import { FakeSession } from './mingo-faults';
import type { BuildOptions } from './mingo-server';

export type Doc = Document & { _id?: unknown };
export type Filter = Document;

export interface IndexSpec {
  name: string;
  key: { [field: string]: 1 | -1 | string };
  unique: boolean;
  sparse?: boolean;
  partialFilterExpression?: Filter;
  expireAfterSeconds?: number;
}
export interface IndexOptions extends BuildOptions {
  unique?: boolean;
  sparse?: boolean;
  name?: string;
  partialFilterExpression?: Filter;
  expireAfterSeconds?: number;
  /** Set by createIndexes: the build was aborted (maxTimeMS) while this call was held. */
  signal?: { aborted: boolean };
}

export function sessionOf(opts: { session?: unknown } | undefined): FakeSession | undefined {
  return opts?.session instanceof FakeSession ? opts.session : undefined;
}

export interface FindOptions {
  sort?: Sort;
  limit?: number;
  skip?: number;
  projection?: Document;
  session?: unknown;
  maxTimeMS?: number;
}
export interface WriteOptions {
  session?: unknown;
  writeConcern?: unknown;
}
export interface UpdateOptions extends WriteOptions {
  upsert?: boolean;
  returnDocument?: 'before' | 'after';
  sort?: Sort;
}

export function requireOperators(update: Document): void {
  const keys = Object.keys(update);
  if (keys.length === 0 || !keys.every((k) => k.startsWith('$'))) {
    throw new MongoInvalidArgumentError('Update document requires atomic operators');
  }
}
