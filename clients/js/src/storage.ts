/**
 * Where the session is kept. `localStorage` fits as it is; a server-side adapter can read and
 * write cookies (see the README). Methods may be synchronous or return promises.
 */
export interface SessionStorage {
  getItem(key: string): string | null | Promise<string | null>;
  setItem(key: string, value: string): void | Promise<void>;
  removeItem(key: string): void | Promise<void>;
}

/** The default: the session lives as long as this client object (one page, one Node process). */
export function memoryStorage(): SessionStorage {
  const items = new Map<string, string>();
  return {
    getItem: (k) => items.get(k) ?? null,
    setItem: (k, v) => void items.set(k, v),
    removeItem: (k) => void items.delete(k),
  };
}

/** The browser's `localStorage` (shared by every tab of the origin), or memory where there is none. */
export function localStorageAdapter(): SessionStorage {
  const ls = (globalThis as unknown as { localStorage?: SessionStorage }).localStorage;
  return ls ?? memoryStorage();
}
