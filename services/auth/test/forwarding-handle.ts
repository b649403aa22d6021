/**
 * A stand-in for an object that jest hooks create and replace (one per file or per test):
 * property reads go to whatever `current()` returns at that moment; methods are bound to it.
 */
export function forwardingHandle<T extends object>(current: () => T | null, what: string): T {
  return new Proxy({} as T, {
    get(_target, prop) {
      const target = current();
      if (!target) throw new Error(`${what} is not available here (use it inside a test)`);
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A store an adapter's test file makes for the contract suite, and how to dispose of it. */
export interface StoreFixture<S> {
  store: S;
  cleanup: () => Promise<void>;
}

/** Makes a fresh store before each test and cleans it up after; returns a handle to the current one. */
export function freshStorePerTest<S extends object>(make: () => Promise<StoreFixture<S>>): S {
  let fx: StoreFixture<S> | null = null;
  beforeEach(async () => {
    fx = await make();
  });
  afterEach(async () => {
    await fx?.cleanup();
    fx = null;
  });
  return forwardingHandle(() => fx?.store ?? null, 'the store under test');
}
