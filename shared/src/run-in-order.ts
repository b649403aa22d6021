import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Runs `handlers` one after another as one handler, stopping at the first error, as the same
 * handlers mounted one by one would run, without express's router between them. As in express,
 * a handler that throws, or returns a promise that rejects, passes that error on.
 */
export function runInOrder(handlers: RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    let i = 0;
    const step = (err?: unknown): void => {
      const handler = handlers[i++];
      if (err || !handler) {
        next(err);
        return;
      }
      try {
        const result: unknown = handler(req, res, step);
        if (result instanceof Promise) result.catch((e: unknown) => next(e));
      } catch (e) {
        next(e);
      }
    };
    step();
  };
}
