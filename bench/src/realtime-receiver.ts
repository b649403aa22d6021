import { WebSocket } from 'ws';
import { benchClockMs } from './realtime-clock';
import type { ReceiverReport, ReceiverRequest } from './realtime-receivers';

/**
 * One receiving process of the realtime bench (realtime-receivers.ts starts several): holds its
 * share of the WebSocket connections and, for every `events` message, takes the arrival time
 * first and then reads only what it needs from the text — the send time the writer put in each
 * record's title (`t<ms>`, on the machine-wide monotonic clock) and, for owner-only
 * subscriptions, each record's owner. No JSON parse, no UTF-8 validation of frames.
 */

const TITLE = /"title":"t(\d+\.\d+)"/g;
const OWNER = /"owner":"([^"]*)"/g;
const CREATED = /"created_at":"([^"]+)"/g;
const EVENT = /\{"kind":"/g;

let latencies: number[] = [];
/** From each record's `created_at` (the server's wall clock as it starts the write) to its arrival. */
let fromCommit: number[] = [];
let timing = false;
let delivered = 0;
let misdelivered = 0;
let cpuFrom = process.cpuUsage();
let wallFrom = benchClockMs();
let sockets: WebSocket[] = [];

function send(msg: ReceiverReport): void {
  process.send!(msg);
}

function onEvents(text: string, owner: string | null, at: number, wall: number): void {
  EVENT.lastIndex = 0;
  while (EVENT.exec(text)) delivered++;
  if (timing) {
    TITLE.lastIndex = 0;
    for (let m = TITLE.exec(text); m; m = TITLE.exec(text)) latencies.push(at - Number(m[1]));
    CREATED.lastIndex = 0;
    for (let m = CREATED.exec(text); m; m = CREATED.exec(text)) fromCommit.push(wall - Date.parse(m[1]!));
  }
  if (owner !== null) {
    OWNER.lastIndex = 0;
    for (let m = OWNER.exec(text); m; m = OWNER.exec(text)) if (m[1] !== owner) misdelivered++;
  }
}

async function open(req: Extract<ReceiverRequest, { type: 'open' }>): Promise<void> {
  const batch = 50;
  for (let start = 0; start < req.connections.length; start += batch) {
    await Promise.all(
      req.connections.slice(start, start + batch).map(
        ({ token, owner }) =>
          new Promise<void>((resolve, reject) => {
            const ws = new WebSocket(`${req.url.replace('http', 'ws')}/v1/projects/${req.project}/realtime?key=${req.pk}`, {
              perMessageDeflate: false,
              skipUTF8Validation: true,
            });
            sockets.push(ws);
            let subscribed = false;
            ws.on('message', (data: Buffer) => {
              const at = benchClockMs();
              const wall = Date.now();
              const text = data.toString('latin1');
              if (subscribed) {
                onEvents(text, owner, at, wall);
                return;
              }
              if (text.startsWith('{"type":"subscribed"')) {
                subscribed = true;
                resolve();
              } else if (text.startsWith('{"type":"error"')) reject(new Error(text));
            });
            ws.once('open', () => {
              if (token) ws.send(JSON.stringify({ type: 'auth', token }));
              ws.send(JSON.stringify({ type: 'subscribe', id: 's', collection: req.collection }));
            });
            ws.once('error', reject);
          }),
      ),
    );
  }
}

process.on('message', (raw) => {
  const req = raw as ReceiverRequest;
  switch (req.type) {
    case 'open':
      open(req).then(
        () => send({ type: 'opened' }),
        (err: unknown) => send({ type: 'failed', message: err instanceof Error ? err.message : String(err) }),
      );
      return;
    case 'reset':
      latencies = [];
      fromCommit = [];
      timing = req.timing;
      delivered = 0;
      misdelivered = 0;
      cpuFrom = process.cpuUsage();
      wallFrom = benchClockMs();
      send({ type: 'reset' });
      return;
    case 'report': {
      const cpu = process.cpuUsage(cpuFrom);
      send({ type: 'report', latencies, fromCommit, delivered, misdelivered, cpuMs: (cpu.user + cpu.system) / 1000, wallMs: benchClockMs() - wallFrom });
      latencies = [];
      fromCommit = [];
      return;
    }
    case 'count':
      send({ type: 'counted', delivered });
      return;
    case 'close':
      for (const ws of sockets) ws.terminate();
      sockets = [];
      send({ type: 'closed' });
      return;
  }
});

// The bench is done with this process (or gone): exit, so that a --cpu-prof profile is written.
process.on('disconnect', () => process.exit(0));
