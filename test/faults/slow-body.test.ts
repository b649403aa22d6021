import net from 'node:net';
import { startCluster, type Cluster } from '@plinth/testing/cluster';
import { projectCall, type ProjectAccess } from '../e2e/support/api';

/**
 * Fault: clients that trickle a request body (slowloris on POST). The gateway bounds the time to
 * receive a body (PLINTH_BODY_TIMEOUT_MS, here 1 s) and answers 408 `request_timeout` with the
 * envelope, so hundreds of trickling connections cannot hold the upstream connection pool and
 * starve every other records request behind that gateway.
 */
describe('slow request bodies at the gateway', () => {
  let cluster: Cluster;
  let p: ProjectAccess;

  beforeAll(async () => {
    cluster = await startCluster({ env: { PLINTH_BODY_TIMEOUT_MS: '1000' } });
    p = { url: cluster.url, ...(await cluster.createProject('faults-slowbody')) };
    expect((await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: { name: 'notes', fields: { body: { type: 'text' } } } })).status).toBe(201);
  }, 60_000);

  afterAll(() => cluster?.stop());

  /** Sends headers and a first byte of a 200-byte JSON body, then one byte every 250 ms; resolves with the raw answer. */
  function trickle(): Promise<string> {
    const { port } = new URL(cluster.url);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1');
      let answer = '';
      let timer: NodeJS.Timeout | undefined;
      const guard = setTimeout(() => {
        socket.destroy();
        reject(new Error('no answer to a trickled body within 20 s'));
      }, 20_000);
      socket.on('connect', () => {
        socket.write(
          `POST /v1/projects/${p.id}/collections/notes/records HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${p.secretKey}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{',
        );
        timer = setInterval(() => socket.write(' '), 250);
      });
      socket.on('data', (d) => (answer += d.toString()));
      socket.on('error', (err) => (answer ||= `error: ${err.message}`));
      socket.on('close', () => {
        clearInterval(timer);
        clearTimeout(guard);
        resolve(answer);
      });
    });
  }

  it('answers a trickled body 408 request_timeout with the envelope and closes the connection', async () => {
    const answer = await trickle();
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: string; message: string };
    expect(body.error).toBe('request_timeout');
    expect(body.message).toMatch(/did not arrive/);
  });

  it('520 trickling clients do not starve other records requests', async () => {
    // Connected in batches, so the listen backlog never overflows.
    const tricklers: Promise<string>[] = [];
    for (let batch = 0; batch < 4; batch++) {
      for (let i = 0; i < 130; i++) tricklers.push(trickle());
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 200)); // all trickling, holding what they can
    const reads = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const res = await fetch(`${p.url}/v1/projects/${p.id}/collections/notes/records`, {
          headers: { Authorization: `Bearer ${p.secretKey}` },
          signal: AbortSignal.timeout(15_000),
        });
        return res.status;
      }),
    );
    expect(reads).toEqual([200, 200, 200, 200, 200]);
    const answers = await Promise.all(tricklers);
    const kinds = answers.map((a) => (a.startsWith('HTTP/1.1 408 ') ? '408' : a.slice(0, 40)));
    expect(kinds.filter((k) => k !== '408')).toEqual([]);
  });
});
