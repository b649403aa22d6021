/**
 * The cursor of the mingo stand-in's `find` (mingo-db.ts): filter, sort, skip, limit and
 * projection evaluated by mingo over the documents a read may see, with strings in UTF-8 byte
 * order and the filter as the server evaluates it (mingo-filter.ts). Test-only.
 */
import type { Document } from 'mongodb';
import { find as mingoFind } from 'mingo';
import { clone, utf8Ordered } from './mingo-bson';
import { SERVER_QUERY_OPTIONS, serverFilter } from './mingo-filter';
import { serverSort, TEXT_SCORE } from './mingo-text';

type Doc = Document & { _id?: unknown };
type Filter = Document;
export type Sort = { [field: string]: 1 | -1 };

export class FakeCursor {
  private sortSpec: Sort | undefined;
  private limitN = 0;
  private skipN = 0;
  private proj: Document | undefined;
  private timeLimitMs: number | undefined;
  constructor(
    private readonly docs: (maxTimeMS: number | undefined) => Promise<Doc[]>,
    private readonly filter: Filter,
  ) {}
  sort(spec: Sort | Document): this {
    this.sortSpec = serverSort(spec);
    return this;
  }
  limit(n: number): this {
    this.limitN = n;
    return this;
  }
  skip(n: number): this {
    this.skipN = n;
    return this;
  }
  project(p: Document): this {
    this.proj = p;
    return this;
  }
  /** Kept for the `slow` fault (mingo-faults.ts): only an operation with a time limit is stopped. */
  maxTimeMS(ms: number): this {
    this.timeLimitMs = ms;
    return this;
  }
  async toArray(): Promise<Doc[]> {
    // Filter and sort over copies whose strings compare like UTF-8 bytes, as on the server.
    const originals = new Map<Doc, Doc>();
    const viewed = (await this.docs(this.timeLimitMs)).map((d) => {
      const v = utf8Ordered(d) as Doc;
      originals.set(v, d);
      return v;
    });
    let c = mingoFind(viewed, serverFilter(this.filter), undefined, SERVER_QUERY_OPTIONS);
    if (this.sortSpec) c = c.sort(this.sortSpec);
    if (this.skipN) c = c.skip(this.skipN);
    if (this.limitN) c = c.limit(this.limitN);
    const found = (c.all() as Doc[]).map((v) => {
      const { [TEXT_SCORE]: _score, ...doc } = originals.get(v) as Doc;
      return doc;
    });
    return (this.proj ? (mingoFind(found, {}, this.proj).all() as Doc[]) : found).map(clone);
  }
  async *[Symbol.asyncIterator](): AsyncGenerator<Doc> {
    for (const d of await this.toArray()) yield d;
  }
}
