import express from 'express';

/**
 * The machine's ceiling: a bare express app answering a small JSON body (GET), and echoing a small
 * JSON body (POST: the ceiling for writes, which parse a body). Run as its own process.
 */
const app = express();
app.get('/hello', (_req, res) => {
  res.json({ hello: 'world' });
});
app.post('/hello', express.json(), (req, res) => {
  res.status(201).json({ got: req.body as unknown });
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : ''}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
