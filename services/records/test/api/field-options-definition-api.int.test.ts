/**
 * Field options beside `type` (docs/records.md, "Field options"), as a collection is saved,
 * through the real gateway in both topologies: each bad option is a 400 naming the field and the
 * option, nothing is saved; good options are answered back, timestamps normalized.
 */
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { client, type Client } from './client';

let t: TestPlinth;
let api: Client;
beforeAll(async () => {
  t = await startTestPlinth();
  api = client(t);
});
afterAll(() => t.close());

/** [case, definition of field f, the option named, a part of the message, more details]. */
const BAD_DEFINITIONS: Array<[string, object, string, string, object?]> = [
  ['min on a text field', { type: 'text', min: 1 }, 'min', 'does not apply to a text field'],
  ['max on a boolean field', { type: 'boolean', max: 1 }, 'max', 'does not apply to a boolean field'],
  ['min not a number', { type: 'number', min: '1' }, 'min', 'must be a value of type number'],
  ['min of an integer field not an integer', { type: 'integer', min: 1.5 }, 'min', 'must be a value of type integer'],
  ['min of a timestamp field not a timestamp', { type: 'timestamp', min: '2026-01-01' }, 'min', 'must be an ISO 8601 timestamp'],
  ['min greater than max', { type: 'integer', min: 5, max: 4 }, 'min', 'is greater than "max"'],
  ['timestamp min after max', { type: 'timestamp', min: '2026-02-01T00:00:00Z', max: '2026-01-31T23:00:00+02:00' }, 'min', 'is greater than "max"'],
  ['min_length on a number field', { type: 'number', min_length: 1 }, 'min_length', 'does not apply to a number field'],
  ['max_length negative', { type: 'text', max_length: -1 }, 'max_length', 'must be an integer ≥ 0'],
  ['max_length not an integer', { type: 'list', max_length: 2.5 }, 'max_length', 'must be an integer ≥ 0'],
  ['min_length greater than max_length', { type: 'text', min_length: 3, max_length: 2 }, 'min_length', 'is greater than "max_length"'],
  ['pattern on a list field', { type: 'list', pattern: 'a' }, 'pattern', 'does not apply to a list field'],
  ['pattern not a string', { type: 'text', pattern: 1 }, 'pattern', 'must be a string'],
  ['pattern with a lookahead (RE2 has none)', { type: 'text', pattern: '^(?=a)' }, 'pattern', 'not a regular expression RE2 accepts'],
  ['pattern with a backreference (RE2 has none)', { type: 'text', pattern: '(a)\\1' }, 'pattern', 'not a regular expression RE2 accepts'],
  ['pattern that does not parse', { type: 'text', pattern: '([a-z]' }, 'pattern', 'not a regular expression RE2 accepts'],
  ['pattern longer than 256 characters', { type: 'text', pattern: 'a'.repeat(257) }, 'pattern', 'longer than 256 characters'],
  ['pattern compiling to too large a program', { type: 'text', pattern: '[ab]{1000}[ab]{1000}[ab]{1000}' }, 'pattern', 'more than 2000'],
  ['enum on a json field', { type: 'json', enum: [1] }, 'enum', 'does not apply to a json field'],
  ['enum not a list', { type: 'text', enum: 'a' }, 'enum', 'must be a list of 1 to 100 values'],
  ['enum empty', { type: 'text', enum: [] }, 'enum', 'must be a list of 1 to 100 values'],
  ['enum of more than 100 values', { type: 'integer', enum: Array.from({ length: 101 }, (_, i) => i) }, 'enum', 'must be a list of 1 to 100 values'],
  ['enum value of another type', { type: 'integer', enum: [1, 'two'] }, 'enum', 'not of type integer', { index: 1 }],
  ['enum value twice (timestamps compared normalized)', { type: 'timestamp', enum: ['2026-01-01T00:00:00Z', '2026-01-01T01:00:00+01:00'] }, 'enum', 'twice', { index: 1 }],
  ['default of another type', { type: 'integer', default: '1' }, 'default', 'must be a value of type integer'],
  ['default null', { type: 'text', default: null }, 'default', 'must be a value of type text'],
  ['default below min', { type: 'number', min: 0, default: -1 }, 'default', 'breaks the field\'s own "min"', { constraint: 'min' }],
  ['default longer than max_length', { type: 'text', max_length: 3, default: 'four' }, 'default', 'breaks the field\'s own "max_length"', { constraint: 'max_length' }],
  ['default not matching pattern', { type: 'text', pattern: '^[a-z]+$', default: 'A' }, 'default', 'breaks the field\'s own "pattern"', { constraint: 'pattern' }],
  ['default not in enum', { type: 'text', enum: ['open', 'closed'], default: 'draft' }, 'default', 'breaks the field\'s own "enum"', { constraint: 'enum' }],
  ['list default with too few items', { type: 'list', min_length: 2, default: ['a'] }, 'default', 'breaks the field\'s own "min_length"', { constraint: 'min_length' }],
  ['json default MongoDB cannot store', { type: 'json', default: { $ref: 'x' } }, 'default', 'cannot be stored'],
  ['an unknown option', { type: 'text', minimum: 1 }, 'minimum', 'unknown option "minimum"'],
];

describe('saving a collection with a bad option → 400 naming the field and the option', () => {
  // Every row gets its fifth value: a callback with more parameters than a row would be given `done`.
  it.each(BAD_DEFINITIONS.map(([name, def, key, why, extra]) => [name, def, key, why, extra ?? {}] as const))('%s', async (_name, def, key, why, extra) => {
    const res = await api.post('/collections', { name: 'bad', fields: { f: def } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_request',
      message: expect.stringContaining(why),
      details: { field: 'f', key, ...extra },
    });
    await api.get('/collections/bad').expect(404);
  });

  it('a PATCH adding a bad option changes nothing', async () => {
    await api.post('/collections', { name: 'patched', fields: { n: { type: 'integer', max: 10 } } }).expect(201);
    const res = await api.patch('/collections/patched', { fields: { n: { type: 'integer', min: 11, max: 10 } } });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({ field: 'n', key: 'min' });
    const now = (await api.get('/collections/patched').expect(200)).body.collection;
    expect(now.revision).toBe(1);
    expect(now.fields.n).toEqual({ type: 'integer', required: false, unique: false, indexed: false, max: 10 });
  });
});

describe('good options', () => {
  it('are answered back as given, timestamps in UTC, absent options absent', async () => {
    const fields = {
      n: { type: 'integer', min: -5, max: 5, default: 0, enum: [-5, 0, 5] },
      x: { type: 'number', min: 0.5 },
      due: { type: 'timestamp', min: '2026-01-01T00:00:00+02:00', max: '2026-12-31T23:00:00Z', enum: ['2026-06-01T12:00:00-01:00'] },
      title: { type: 'text', required: true, min_length: 0, max_length: 80, pattern: '^\\S', default: 'untitled' },
      tags: { type: 'list', max_length: 3, default: ['a'] },
      meta: { type: 'json', default: { k: [1, null] } },
      done: { type: 'boolean', default: false },
    };
    const res = await api.post('/collections', { name: 'shown', fields });
    expect(res.status).toBe(201);
    const flags = { required: false, unique: false, indexed: false };
    const expected = {
      n: { ...fields.n, ...flags },
      x: { ...fields.x, ...flags },
      due: { type: 'timestamp', ...flags, min: '2025-12-31T22:00:00.000Z', max: '2026-12-31T23:00:00.000Z', enum: ['2026-06-01T13:00:00.000Z'] },
      title: { ...fields.title, ...flags, required: true },
      tags: { ...fields.tags, ...flags },
      meta: { ...fields.meta, ...flags },
      done: { ...fields.done, ...flags },
    };
    expect(res.body.collection.fields).toEqual(expected);
    expect((await api.get('/collections/shown').expect(200)).body.collection.fields).toEqual(expected);
  });

  it('a form-encoded definition carries them too', async () => {
    const fields = JSON.stringify({ code: { type: 'text', pattern: '^[A-Z]{3}$', enum: ['ABC', 'XYZ'] } });
    const res = await api.postForm('/collections', { name: 'formed', fields });
    expect(res.status).toBe(201);
    expect(res.body.collection.fields.code).toEqual({ type: 'text', required: false, unique: false, indexed: false, pattern: '^[A-Z]{3}$', enum: ['ABC', 'XYZ'] });
  });
});
