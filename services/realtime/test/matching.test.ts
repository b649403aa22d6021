/** deliveryFor: what one committed change means to one subscription (docs/realtime.md "Events"). */
import { asProjectId, type ChangeEvent, type Predicate, type RecordDoc } from '@plinth/shared';
import { deliveryFor } from '../src/matching';

const rec = (owner: string, version = 1): RecordDoc => ({ id: 'rec_1', version, created_at: 't', updated_at: 't', owner, title: 'x' });
const ev = (kind: ChangeEvent['kind'], record?: RecordDoc, previous?: RecordDoc): ChangeEvent => ({
  seq: 7,
  project: asProjectId('proj'),
  collection: 'notes',
  kind,
  ...(record ? { record } : {}),
  ...(previous ? { previous } : {}),
  committed_at: 0,
});
const mine: Predicate = ['owner', '==', 'a'];

it.each([
  ['create inside', ev('create', rec('a')), 'create'],
  ['create outside', ev('create', rec('b')), null],
  ['update inside → inside', ev('update', rec('a', 2), rec('a')), 'update'],
  ['update outside → inside', ev('update', rec('a', 2), rec('b')), 'enter'],
  ['update inside → outside', ev('update', rec('b', 2), rec('a')), 'leave'],
  ['update outside → outside', ev('update', rec('b', 2), rec('c')), null],
  ['delete of a matching record', ev('delete', rec('a'), rec('a')), 'delete'],
  ['delete of another record', ev('delete', rec('b'), rec('b')), null],
  ['collection change', ev('collection'), null],
] as const)('%s → %s', (_name, event, kind) => {
  expect(deliveryFor(event, mine)?.kind ?? null).toBe(kind);
});

it('a leave carries only the id and version, never the data the client may no longer read', () => {
  expect(deliveryFor(ev('update', rec('b', 2), rec('a')), mine)).toEqual({ kind: 'leave', seq: 7, record: { id: 'rec_1', version: 2 } });
});

it('an enter and an update carry the record after the write', () => {
  expect(deliveryFor(ev('update', rec('a', 2), rec('b')), mine)).toEqual({ kind: 'enter', seq: 7, record: rec('a', 2) });
});
