/** A tiny client for API tests: the real gateway (harness) with a project's keys. */
import request from 'supertest';
import type { TestPlinth } from '@plinth/testing/harness';

export type Key = 'secret' | 'public';

export function client(t: TestPlinth) {
  const base = `/v1/projects/${t.project.id}`;
  const auth = (key: Key): string => `Bearer ${key === 'secret' ? t.project.secretKey : t.project.publicKey}`;
  return {
    base,
    get: (path: string, key: Key = 'secret') => request(t.app).get(`${base}${path}`).set('Authorization', auth(key)),
    post: (path: string, body: object, key: Key = 'secret') =>
      request(t.app).post(`${base}${path}`).set('Authorization', auth(key)).send(body),
    patch: (path: string, body: object, key: Key = 'secret') =>
      request(t.app).patch(`${base}${path}`).set('Authorization', auth(key)).send(body),
    delete: (path: string, key: Key = 'secret') => request(t.app).delete(`${base}${path}`).set('Authorization', auth(key)),
    /** A form-encoded POST, as the contract specifies for creating collections. */
    postForm: (path: string, form: { [k: string]: string }, key: Key = 'secret') =>
      request(t.app).post(`${base}${path}`).set('Authorization', auth(key)).type('form').send(form),
  };
}

export type Client = ReturnType<typeof client>;

/** `?where=…&orderBy=…` from parameters; `where` is JSON-encoded. */
export function qs(params: { where?: unknown; [k: string]: unknown }): string {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    s.set(k, k === 'where' ? JSON.stringify(v) : String(v));
  }
  return `?${s.toString()}`;
}
