import { ConflictError, asProjectId } from '@plinth/shared';
import { generateKey, hashKey } from '../src/keys';
import type { ProjectStore } from '../src/store/project-store';

/** Ways to make an adapter's writes fail, for the tests of what a half-done write leaves behind. */
export interface ProjectStoreFaults {
  /** Makes the next deletion of keys (of a project being deleted) fail; the returned function undoes it. */
  failKeyDeletion(store: ProjectStore): Promise<() => Promise<void>>;
}

/**
 * The ProjectStore contract: every adapter must pass all of it, unchanged.
 * `makeStore` returns a fresh, empty store. Without `faults` (a real server, where nothing can
 * be made to fail on demand) the failure-injection test is not registered; the suite's name says so.
 */
export function describeProjectStoreContract(name: string, makeStore: () => Promise<ProjectStore>, faults?: ProjectStoreFaults): void {
  describe(`ProjectStore contract: ${name}`, () => {
    let store: ProjectStore;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    const alpha = asProjectId('alpha');
    const beta = asProjectId('beta');
    const project = (id: typeof alpha, at: string) => ({ id, name: `Project ${id}`, created_at: at });

    it('creates a project with its keys and finds each key by hash', async () => {
      const pub = generateKey(alpha, 'public');
      const sec = generateKey(alpha, 'secret');
      await store.createProject(project(alpha, '2026-01-01T00:00:00.000Z'), [pub.record, sec.record]);
      expect(await store.getProject(alpha)).toEqual(project(alpha, '2026-01-01T00:00:00.000Z'));
      expect(await store.findKeyByHash(hashKey(pub.value))).toEqual(pub.record);
      expect(await store.findKeyByHash(hashKey(sec.value))).toEqual(sec.record);
      expect(await store.findKeyByHash(hashKey('pk_not-a-real-key-at-all-000000'))).toBeNull();
    });

    it('refuses a second project with the same id and keeps the first intact', async () => {
      const first = generateKey(alpha, 'public');
      await store.createProject(project(alpha, '2026-01-01T00:00:00.000Z'), [first.record]);
      const second = generateKey(alpha, 'public');
      await expect(store.createProject(project(alpha, '2026-02-01T00:00:00.000Z'), [second.record])).rejects.toThrow(ConflictError);
      expect((await store.getProject(alpha))?.created_at).toBe('2026-01-01T00:00:00.000Z');
      expect(await store.findKeyByHash(second.record.hash)).toBeNull();
      expect(await store.findKeyByHash(first.record.hash)).toEqual(first.record);
    });

    it('lists projects oldest first and returns null for an absent one', async () => {
      await store.createProject(project(beta, '2026-03-01T00:00:00.000Z'), []);
      await store.createProject(project(alpha, '2026-01-01T00:00:00.000Z'), []);
      expect((await store.listProjects()).map((p) => p.id)).toEqual(['alpha', 'beta']);
      expect(await store.getProject(asProjectId('gamma'))).toBeNull();
    });

    it('adds keys only to existing projects and lists them oldest first', async () => {
      await store.createProject(project(alpha, '2026-01-01T00:00:00.000Z'), []);
      const k1 = generateKey(alpha, 'public', new Date('2026-01-02T00:00:00.000Z'));
      const k2 = generateKey(alpha, 'secret', new Date('2026-01-03T00:00:00.000Z'));
      expect(await store.addKey(k2.record)).toBe(true);
      expect(await store.addKey(k1.record)).toBe(true);
      expect((await store.listKeys(alpha)).map((k) => k.id)).toEqual([k1.record.id, k2.record.id]);
      expect(await store.addKey(generateKey(beta, 'public').record)).toBe(false);
      expect(await store.listKeys(beta)).toEqual([]);
    });

    it('deletes one key of one project only', async () => {
      const a = generateKey(alpha, 'public');
      const b = generateKey(beta, 'public');
      await store.createProject(project(alpha, '2026-01-01T00:00:00.000Z'), [a.record]);
      await store.createProject(project(beta, '2026-01-01T00:00:00.000Z'), [b.record]);
      expect(await store.deleteKey(beta, a.record.id)).toBe(false);
      expect(await store.findKeyByHash(a.record.hash)).not.toBeNull();
      expect(await store.deleteKey(alpha, a.record.id)).toBe(true);
      expect(await store.findKeyByHash(a.record.hash)).toBeNull();
      expect(await store.deleteKey(alpha, a.record.id)).toBe(false);
      expect(await store.findKeyByHash(b.record.hash)).toEqual(b.record);
    });

    it('deleting a project deletes its keys', async () => {
      const a = generateKey(alpha, 'secret');
      await store.createProject(project(alpha, '2026-01-01T00:00:00.000Z'), [a.record]);
      expect(await store.deleteProject(alpha)).toBe(true);
      expect(await store.getProject(alpha)).toBeNull();
      expect(await store.findKeyByHash(a.record.hash)).toBeNull();
      expect(await store.listKeys(alpha)).toEqual([]);
      expect(await store.deleteProject(alpha)).toBe(false);
    });

    it('keeps a deleted id from being created again until its purge has finished', async () => {
      await store.createProject(project(alpha, '2026-01-01T00:00:00.000Z'), [generateKey(alpha, 'public').record]);
      await store.createProject(project(beta, '2026-01-02T00:00:00.000Z'), []);
      expect(await store.listPurges()).toEqual([]);
      expect(await store.deleteProject(alpha)).toBe(true);
      expect(await store.deleteProject(alpha)).toBe(false);
      expect(await store.listPurges()).toEqual([alpha]);
      const again = generateKey(alpha, 'public');
      await expect(store.createProject(project(alpha, '2026-03-01T00:00:00.000Z'), [again.record])).rejects.toThrow(/being purged/);
      expect(await store.getProject(alpha)).toBeNull();
      expect(await store.findKeyByHash(again.record.hash)).toBeNull();
      await store.finishPurge(alpha);
      await store.finishPurge(alpha);
      expect(await store.listPurges()).toEqual([]);
      await store.createProject(project(alpha, '2026-03-01T00:00:00.000Z'), [again.record]);
      expect(await store.findKeyByHash(again.record.hash)).toEqual(again.record);
      expect(await store.deleteProject(asProjectId('never-made'))).toBe(false);
      expect(await store.listPurges()).toEqual([]);
    });

    if (faults) {
      it('leaves no key that authenticates when deleting a project fails half-way', async () => {
        const a = generateKey(alpha, 'secret');
        await store.createProject(project(alpha, '2026-01-01T00:00:00.000Z'), [a.record]);
        const restore = await faults.failKeyDeletion(store);
        // (Not `rejects.toThrow()`: better-sqlite3's errors may come from another test file's realm.)
        const outcome = await store.deleteProject(alpha).then(() => 'resolved', () => 'rejected');
        expect(outcome).toBe('rejected');
        await restore();
        // All or nothing: either the project is still there with its key, or both are gone.
        if (await store.getProject(alpha)) expect(await store.findKeyByHash(a.record.hash)).toEqual(a.record);
        else expect(await store.findKeyByHash(a.record.hash)).toBeNull();
        await store.deleteProject(alpha);
        await store.finishPurge(alpha); // the services' purge of that id has completed
        await store.createProject(project(alpha, '2026-02-01T00:00:00.000Z'), []);
        expect(await store.findKeyByHash(a.record.hash)).toBeNull();
        expect(await store.listKeys(alpha)).toEqual([]);
      });
    }

    it('a key added while its project is deleted never outlives the project', async () => {
      for (const order of ['add first', 'delete first']) {
        await store.createProject(project(alpha, '2026-01-01T00:00:00.000Z'), []);
        const k = generateKey(alpha, 'public');
        const add = () => store.addKey(k.record);
        const del = () => store.deleteProject(alpha);
        const [added] = order === 'add first' ? await Promise.all([add(), del()]) : (await Promise.all([del(), add()])).reverse();
        expect(await store.getProject(alpha)).toBeNull();
        expect(await store.findKeyByHash(k.record.hash)).toBeNull();
        expect(await store.listKeys(alpha)).toEqual([]);
        expect(typeof added).toBe('boolean');
        await store.finishPurge(alpha); // the services' purge of that id has completed
        await store.createProject(project(alpha, '2026-02-01T00:00:00.000Z'), []);
        expect(await store.findKeyByHash(k.record.hash)).toBeNull();
        await store.deleteProject(alpha);
        await store.finishPurge(alpha);
      }
    });

    it('never matches a hash given as a query object', async () => {
      const a = generateKey(alpha, 'public');
      await store.createProject(project(alpha, '2026-01-01T00:00:00.000Z'), [a.record]);
      const injected = { $ne: null } as unknown as string;
      expect(await store.findKeyByHash(injected)).toBeNull();
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
