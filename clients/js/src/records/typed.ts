/**
 * Collections typed by name, from the `Collections` map that `plinth types` writes:
 *
 *   import type { Collections } from './plinth-types';
 *   const plinth = createClient<Collections>({ … });
 *   plinth.collection('tasks')   // Collection of the tasks record type; a wrong name or field does not compile
 *
 * Types only: nothing here exists at run time.
 */
import type { Collection } from './collection';
import type { SystemFields } from './types';

/** The map of a client created without one: any name, records of unknown fields. */
export interface UntypedCollections {
  [collection: string]: Record<string, unknown>;
}

/** Collection names a client accepts: the keys of its map. */
export type CollectionName<C> = Extract<keyof C, string>;

/** The user fields of a record type (a generated one carries the system fields too; the SDK adds them itself). */
export type UserFields<R> = R extends object ? (string extends keyof R ? R : Omit<R, keyof SystemFields>) : never;

/** What `collection(name)` returns for a name of the map. */
export type TypedCollection<C, K extends CollectionName<C>> = Collection<UserFields<C[K]>>;

/** `collection<T>(name)` with an explicit `T` takes any name only on an untyped client. */
export type ExplicitName<C> = string extends keyof C ? string : never;

/** `collection` of a client whose collections are described by `C`. */
export interface CollectionAccessor<C extends object> {
  /** The records of a collection, typed by the client's map. */
  <K extends CollectionName<C>>(name: K): TypedCollection<C, K>;
  /** The records of a collection, typed by `T` (on a client created without a map). */
  <T extends object>(name: ExplicitName<C>): Collection<T>;
}
