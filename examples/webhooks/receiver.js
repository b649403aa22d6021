// A webhook receiver to try Plinth's webhooks on your machine (docs/webhooks.md):
//   node examples/webhooks/receiver.js received.jsonl
// listens on 127.0.0.1 (a free port), prints its URL, answers 204 to every POST and appends
// each request as one JSON line {headers, body} to the file. It stops by itself after 5 minutes.
// Verify the signature from the saved headers and raw body (the doc shows how), not from a
// re-serialised body: the signature covers the exact bytes sent.
const fs = require('node:fs');
const http = require('node:http');

const file = process.argv[2] || 'received.jsonl';
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    fs.appendFileSync(file, JSON.stringify({ headers: req.headers, body }) + '\n');
    res.writeHead(204).end();
  });
});
server.listen(0, '127.0.0.1', () => {
  console.log(`http://127.0.0.1:${server.address().port}/hook`);
});
setTimeout(() => process.exit(0), 5 * 60_000).unref();
