/**
 * runInOrder runs several handlers as one layer: in order, stopping at the first error, and an
 * error thrown or rejected by any of them reaches the error handler as it would from express.
 */
import express, { type RequestHandler } from 'express';
import request from 'supertest';
import { createLogger, errorHandler, InvalidRequestError, runInOrder } from '@plinth/shared';

function app(handlers: RequestHandler[]): express.Express {
  const a = express();
  a.use(runInOrder(handlers));
  a.get('/', (_req, res) => {
    res.json({ steps: res.locals.steps as string[] });
  });
  a.use(errorHandler(createLogger('test', 'silent')));
  return a;
}

const mark =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    res.locals.steps = [...((res.locals.steps as string[] | undefined) ?? []), name];
    next();
  };

describe('runInOrder', () => {
  it('runs every handler, in order, then the routes after it', async () => {
    const later: RequestHandler = (req, res, next) => {
      setImmediate(() => mark('b')(req, res, next));
    };
    const res = await request(app([mark('a'), later, mark('c')])).get('/');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ steps: ['a', 'b', 'c'] });
  });

  it.each([
    ['passed to next', ((_req, _res, next) => next(new InvalidRequestError('bad one'))) as RequestHandler],
    ['thrown', (() => {
      throw new InvalidRequestError('bad one');
    }) as RequestHandler],
    ['rejected', (async () => {
      await Promise.resolve();
      throw new InvalidRequestError('bad one');
    }) as RequestHandler],
  ])('stops at an error %s and answers it in the envelope', async (_how, failing) => {
    let after = 0;
    const counted: RequestHandler = (_req, _res, next) => {
      after++;
      next();
    };
    // The failing handler runs after one that calls next later, outside express's own try: only
    // runInOrder can pass its error on.
    const later: RequestHandler = (req, res, next) => {
      setImmediate(() => mark('a')(req, res, next));
    };
    const res = await request(app([later, failing, counted])).get('/');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', message: 'bad one' });
    expect(after).toBe(0);
  });
});
