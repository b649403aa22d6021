/**
 * The operator collections' data version on MongoDB (the mingo stand-in): TOTP secrets stored in
 * clear by releases before sealing are sealed in place by migration 1 — once, however many
 * gateway replicas start together — and stay usable; data of a newer release is refused.
 */
import type { Db } from 'mongodb';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { newOperatorTotpSecret } from '../src/operators/totp';
import { MongoProjectStore } from '../src/store/mongo-project-store';

const SECRET = 'internal-secret-for-tests-0123456789abcdef';

async function clearTextOperators(db: Db): Promise<{ enrolled: string; pending: string }> {
  const enrolled = newOperatorTotpSecret();
  const pending = newOperatorTotpSecret();
  const base = { role: 'owner', status: 'active', password_hash: '$2b$04$x', totp_last_step: null, created_at: '2026-01-01T00:00:00.000Z' };
  await db.collection('gateway_operators').insertMany([
    { _id: 'op_enrolled', email: 'enrolled@ops.example', ...base, totp_secret: enrolled, totp_pending: null },
    { _id: 'op_pending', email: 'pending@ops.example', ...base, totp_secret: null, totp_pending: pending },
    { _id: 'op_none', email: 'none@ops.example', ...base, totp_secret: null, totp_pending: null },
  ] as never[]);
  return { enrolled, pending };
}

it('replicas starting together on clear-text TOTP secrets seal each once; every secret opens to what it was', async () => {
  const db = createMingoDb();
  const { enrolled, pending } = await clearTextOperators(db);
  const stores = await Promise.all([1, 2, 3].map(() => new MongoProjectStore(db, { internalSecret: SECRET }).init()));
  const raw = await db.collection('gateway_operators').find({}, { sort: { _id: 1 } }).toArray();
  expect(JSON.stringify(raw)).not.toMatch(new RegExp(`${enrolled}|${pending}`));
  const [enrolledDoc, noneDoc, pendingDoc] = raw as unknown as Array<{ totp_secret: string | null; totp_pending: string | null }>;
  expect(noneDoc).toMatchObject({ totp_secret: null, totp_pending: null });
  // Sealed exactly once: one opening gives the base32 secret back (twice sealed would give a blob).
  const secrets = stores[0]!.operators.secrets;
  expect(secrets.open('op_enrolled', enrolledDoc!.totp_secret!)).toBe(enrolled);
  expect(secrets.open('op_pending', pendingDoc!.totp_pending!)).toBe(pending);
  expect(await db.collection('plinth_data_version').findOne({ _id: 'operators' } as never)).toMatchObject({ version: 1, release: '0.1.0' });
  // A later start changes nothing.
  await new MongoProjectStore(db, { internalSecret: SECRET }).init();
  expect(await db.collection('gateway_operators').find({}, { sort: { _id: 1 } }).toArray()).toEqual(raw);
});

it('refuses operator data of a newer release before it creates an index', async () => {
  const db = createMingoDb();
  await db.collection('plinth_data_version').insertOne({ _id: 'operators', version: 9, release: '0.9.0' } as never);
  await expect(new MongoProjectStore(db, { internalSecret: SECRET }).init()).rejects.toThrow(
    'MongoDB database "mingo" holds operators data version 9 (written by Plinth 0.9.0), newer than this Plinth 0.1.0 knows (1): run that release or a later one',
  );
  expect((await db.listCollections().toArray()).map((c) => c.name)).not.toContain('gateway_operators');
});
