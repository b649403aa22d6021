/**
 * The lean JSON body reader (json-body-fast.ts) answers every body it takes exactly as the
 * body-parser chain does: the same status and envelope for the same bytes, and the same parsed
 * value. Two apps, one per reader, with the same error handler, get the same requests.
 */
import express, { type RequestHandler } from 'express';
import request from 'supertest';
import { bodyParsers, createLogger, errorHandler, runInOrder } from '@plinth/shared';
import { isPlainJsonBody, readPlainJsonBody } from '../src/json-body-fast';

function app(parse: RequestHandler): express.Express {
  const a = express();
  a.post('/echo', parse, (req, res) => {
    res.json({ body: req.body as unknown });
  });
  a.use(errorHandler(createLogger('test', 'silent')));
  return a;
}

const viaBodyParser = app(runInOrder(bodyParsers()));
const viaFast = app((req, _res, next) => {
  if (!isPlainJsonBody(req)) {
    next(new Error('not taken by the fast reader'));
    return;
  }
  readPlainJsonBody(req, next);
});

const nested = (levels: number): string => '{"a":'.repeat(levels - 1) + '[1]' + '}'.repeat(levels - 1);

const cases: Array<[string, string | Buffer]> = [
  ['an object', '{"data":{"title":"x","n":1,"tags":["a","b"]}}'],
  ['an array', '[1,2,3]'],
  ['an empty body', ''],
  ['whitespace only', '  \n '],
  ['a BOM before the object', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')])],
  ['leading whitespace', ' \t{"a":1}'],
  ['null', 'null'],
  ['a string', '"text"'],
  ['a number', '42'],
  ['malformed JSON', '{"a":'],
  ['trailing garbage', '{"a":1} x'],
  ['not JSON at all', 'hello'],
  ['64 levels of nesting', nested(64)],
  ['65 levels of nesting', nested(65)],
  ['UTF-8 text', '{"name":"Zoë ✓ 日本"}'],
  ['a body of exactly 1 MiB', `{"pad":"${'x'.repeat(1024 * 1024 - 10)}"}`],
];

describe.each(cases)('%s', (_name, body) => {
  it('gets the same answer from both readers', async () => {
    const send = (a: express.Express) => request(a).post('/echo').set('Content-Type', 'application/json').send(body);
    const [expected, actual] = await Promise.all([send(viaBodyParser), send(viaFast)]);
    expect({ status: actual.status, body: actual.body as unknown }).toEqual({ status: expected.status, body: expected.body as unknown });
  });
});

it('leaves to body-parser what it does not take: another charset, compression, chunked, over 1 MiB, forms', () => {
  const req = (headers: Record<string, string>) => ({ headers }) as unknown as express.Request;
  const json = { 'content-type': 'application/json', 'content-length': '10' };
  expect(isPlainJsonBody(req(json))).toBe(true);
  expect(isPlainJsonBody(req({ ...json, 'content-type': 'Application/JSON; charset=UTF-8' }))).toBe(true);
  expect(isPlainJsonBody(req({ ...json, 'content-type': 'application/json; charset=latin1' }))).toBe(false);
  expect(isPlainJsonBody(req({ ...json, 'content-encoding': 'gzip' }))).toBe(false);
  expect(isPlainJsonBody(req({ 'content-type': 'application/json', 'transfer-encoding': 'chunked' }))).toBe(false);
  expect(isPlainJsonBody(req({ ...json, 'content-length': String(1024 * 1024 + 1) }))).toBe(false);
  expect(isPlainJsonBody(req({ ...json, 'content-type': 'application/x-www-form-urlencoded' }))).toBe(false);
});
