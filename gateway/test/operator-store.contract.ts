import { ConflictError } from '@plinth/shared';
import type { AuditEntry, OperatorRecord, OperatorSessionRecord } from '../src/store/operator-store';
import type { ProjectStore } from '../src/store/project-store';

/** The OperatorStore contract (operators, sessions, audit log): every project-store adapter passes all of it. */
export function describeOperatorStoreContract(name: string, makeStore: () => Promise<ProjectStore>): void {
  describe(`OperatorStore contract: ${name}`, () => {
    let store: ProjectStore;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    const operator = (id: string, email: string, at: string): OperatorRecord => ({
      id,
      email,
      role: 'admin',
      status: 'active',
      password_hash: '$2b$04$hash',
      totp_secret: null,
      totp_pending: null,
      totp_last_step: null,
      created_at: at,
    });
    const session = (id: string, operatorId: string, expires: string): OperatorSessionRecord => ({
      id,
      operator_id: operatorId,
      token_hash: `hash-${id}`,
      created_at: '2026-01-01T00:00:00.000Z',
      expires_at: expires,
      max_expires_at: '2026-01-02T00:00:00.000Z',
      address: '10.0.0.1',
    });
    const entry = (id: string, at: string, more: Partial<AuditEntry> = {}): AuditEntry => ({
      id,
      at,
      actor_kind: 'operator',
      actor_id: 'op_a',
      actor: 'a@ops.example',
      project: 'alpha',
      method: 'POST',
      path: '/v1/admin/projects',
      status: 201,
      address: '10.0.0.1',
      ...more,
    });

    it('creates, finds, updates and lists operators; an e-mail is taken once', async () => {
      const ops = store.operators;
      await ops.createOperator(operator('op_b', 'b@ops.example', '2026-01-02T00:00:00.000Z'));
      await ops.createOperator(operator('op_a', 'a@ops.example', '2026-01-01T00:00:00.000Z'));
      await expect(ops.createOperator(operator('op_c', 'a@ops.example', '2026-01-03T00:00:00.000Z'))).rejects.toThrow(ConflictError);
      expect((await ops.listOperators()).map((o) => o.id)).toEqual(['op_a', 'op_b']);
      expect(await ops.findOperatorByEmail('b@ops.example')).toEqual(operator('op_b', 'b@ops.example', '2026-01-02T00:00:00.000Z'));
      expect(await ops.updateOperator('op_a', { role: 'viewer', totp_secret: 'JBSWY3DPEHPK3PXP', totp_last_step: 7 })).toBe(true);
      expect(await ops.getOperator('op_a')).toMatchObject({ role: 'viewer', totp_secret: 'JBSWY3DPEHPK3PXP', totp_last_step: 7, email: 'a@ops.example' });
      expect(await ops.updateOperator('op_a', { totp_secret: null })).toBe(true);
      expect((await ops.getOperator('op_a'))?.totp_secret).toBeNull();
      expect(await ops.updateOperator('op_zz', { role: 'owner' })).toBe(false);
      expect(await ops.getOperator('op_zz')).toBeNull();
    });

    it('keeps sessions by token hash, lists them newest first, moves expiry, deletes one, all of an operator, the expired, and with the operator', async () => {
      const ops = store.operators;
      await ops.createOperator(operator('op_a', 'a@ops.example', '2026-01-01T00:00:00.000Z'));
      await ops.createOperator(operator('op_b', 'b@ops.example', '2026-01-01T00:00:00.000Z'));
      await ops.createSession(session('s1', 'op_a', '2026-01-01T01:00:00.000Z'));
      await ops.createSession({ ...session('s2', 'op_a', '2026-01-01T02:00:00.000Z'), created_at: '2026-01-01T00:30:00.000Z' });
      await ops.createSession(session('s3', 'op_b', '2026-01-01T03:00:00.000Z'));
      expect(await ops.findSessionByHash('hash-s2')).toEqual({ ...session('s2', 'op_a', '2026-01-01T02:00:00.000Z'), created_at: '2026-01-01T00:30:00.000Z' });
      expect(await ops.findSessionByHash('hash-none')).toBeNull();
      expect((await ops.listSessions('op_a')).map((s) => s.id)).toEqual(['s2', 's1']);
      expect((await ops.listSessions()).map((s) => s.id).sort()).toEqual(['s1', 's2', 's3']);
      expect(await ops.setSessionExpiry('s1', '2026-01-01T05:00:00.000Z')).toBe(true);
      expect((await ops.findSessionByHash('hash-s1'))?.expires_at).toBe('2026-01-01T05:00:00.000Z');
      expect(await ops.pruneSessions('2026-01-01T02:30:00.000Z')).toBe(1); // s2
      expect(await ops.deleteSession('s1')).toBe(true);
      expect(await ops.deleteSession('s1')).toBe(false);
      await ops.createSession(session('s4', 'op_b', '2026-01-01T03:00:00.000Z'));
      expect(await ops.deleteSessionsOf('op_b')).toBe(2);
      await ops.createSession(session('s5', 'op_a', '2026-01-01T03:00:00.000Z'));
      expect(await ops.deleteOperator('op_a')).toBe(true);
      expect(await ops.findSessionByHash('hash-s5')).toBeNull();
      expect(await ops.deleteOperator('op_a')).toBe(false);
    });

    it('appends audit entries, queries them newest first with filters and a cursor, and prunes by age', async () => {
      const ops = store.operators;
      await ops.appendAudit(entry('aud_01', '2026-01-01T00:00:00.000Z'));
      await ops.appendAudit(entry('aud_02', '2026-01-02T00:00:00.000Z', { actor_kind: 'key', actor_id: 'key_1', actor: 'sk_AbCdE…', project: 'beta' }));
      await ops.appendAudit(entry('aud_03', '2026-01-03T00:00:00.000Z', { actor_kind: 'bootstrap', actor_id: null, actor: 'bootstrap', project: null }));
      await ops.appendAudit(entry('aud_04', '2026-01-04T00:00:00.000Z'));
      const ids = async (q: Parameters<typeof ops.queryAudit>[0]) => (await ops.queryAudit(q)).map((e) => e.id);
      expect(await ids({ limit: 10 })).toEqual(['aud_04', 'aud_03', 'aud_02', 'aud_01']);
      expect(await ops.queryAudit({ limit: 1 })).toEqual([entry('aud_04', '2026-01-04T00:00:00.000Z')]);
      expect(await ids({ limit: 2, before: 'aud_03' })).toEqual(['aud_02', 'aud_01']);
      expect(await ids({ limit: 10, actor: 'a@ops.example' })).toEqual(['aud_04', 'aud_01']);
      expect(await ids({ limit: 10, actor: 'key_1' })).toEqual(['aud_02']);
      expect(await ids({ limit: 10, project: 'alpha' })).toEqual(['aud_04', 'aud_01']);
      expect(await ids({ limit: 10, since: '2026-01-02T00:00:00.000Z', until: '2026-01-04T00:00:00.000Z' })).toEqual(['aud_03', 'aud_02']);
      expect(await ops.pruneAudit('2026-01-03T00:00:00.000Z')).toBe(2);
      expect(await ids({ limit: 10 })).toEqual(['aud_04', 'aud_03']);
    });
  });
}
