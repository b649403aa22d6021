/**
 * Where webhooks may send (docs/webhooks.md "Where webhooks may send"): the URL check at
 * registration and the address check at connect time, with a resolver standing in for DNS.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendWebhook, type Resolver } from '../../src/webhooks/webhook-http';
import { isBlockedAddress, TargetPolicy } from '../../src/webhooks/webhook-target';

it.each([
  ['127.0.0.1', true],
  ['127.8.9.10', true],
  ['10.0.0.1', true],
  ['172.16.3.4', true],
  ['192.168.1.1', true],
  ['169.254.169.254', true],
  ['100.64.0.1', true],
  ['0.0.0.0', true],
  ['224.0.0.1', true],
  ['::1', true],
  ['::', true],
  ['fe80::1', true],
  ['fd00:ec2::254', true],
  ['::ffff:127.0.0.1', true],
  ['::ffff:10.1.2.3', true],
  ['8.8.8.8', false],
  ['93.184.216.34', false],
  ['2606:4700:4700::1111', false],
])('%s blocked: %s', (address, blocked) => {
  expect(isBlockedAddress(address)).toBe(blocked);
});

it('the allow-list: a host as written, or a CIDR of resolved addresses', () => {
  const policy = new TargetPolicy('127.0.0.2, hooks.internal, 10.1.0.0/16');
  expect(policy.urlProblem('http://127.0.0.2:9000/x')).toBeNull();
  expect(policy.urlProblem('http://127.0.0.1:9000/x')).toMatch(/loopback/);
  expect(policy.urlProblem('http://10.1.2.3/x')).toBeNull();
  expect(policy.urlProblem('http://10.2.0.1/x')).toMatch(/private/);
  expect(policy.allowsHost('HOOKS.internal')).toBe(true);
  expect(policy.allowsAddress('10.1.200.1')).toBe(true);
  expect(policy.allowsAddress('127.0.0.2')).toBe(false); // allowed as written only, not when a name resolves to it
  expect(new TargetPolicy('').urlProblem('https://example.com/hook')).toBeNull();
  expect(new TargetPolicy('').urlProblem('file:///etc/passwd')).toMatch(/http or https/);
  expect(() => new TargetPolicy('10.0.0.0/x')).toThrow(TypeError);
});

describe('at connect time', () => {
  let server: http.Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits++;
      if (req.url === '/redirect') res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
      else if (req.url === '/big') res.writeHead(200).end(Buffer.alloc(1024 * 1024, 'x'));
      else res.writeHead(204).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  /** A name whose first answer is public and every later one loopback: DNS rebinding. */
  const rebinding = (): Resolver => {
    let calls = 0;
    return (_host, _opts, cb) => cb(null, [{ address: calls++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }]);
  };
  const loopback: Resolver = (_host, _opts, cb) => cb(null, [{ address: '127.0.0.1', family: 4 }]);

  it('refuses a name that resolves to loopback when it connects, and sends nothing', async () => {
    const before = hits;
    const policy = new TargetPolicy('');
    await expect(sendWebhook(`http://rebind.example:${port}/`, {}, '{}', { policy, timeoutMs: 2000, maxResponseBytes: 65536, resolver: loopback })).rejects.toThrow(
      /rebind\.example resolves to 127\.0\.0\.1/,
    );
    // The URL passed the registration check (a name), the connection did not.
    expect(policy.urlProblem(`http://rebind.example:${port}/`)).toBeNull();
    const resolver = rebinding();
    resolver('rebind.example', {}, () => {}); // the answer seen when the webhook was saved
    await expect(sendWebhook(`http://rebind.example:${port}/`, {}, '{}', { policy, timeoutMs: 2000, maxResponseBytes: 65536, resolver })).rejects.toThrow(/may not reach/);
    expect(hits).toBe(before);
  });

  it('does not follow redirects (a 3xx is the answer), answers a 1 MB body by its status, refuses a literal loopback address', async () => {
    const policy = new TargetPolicy('127.0.0.1');
    await expect(sendWebhook(`http://127.0.0.1:${port}/redirect`, {}, '{}', { policy, timeoutMs: 2000, maxResponseBytes: 65536 })).resolves.toEqual({ status: 302 });
    await expect(sendWebhook(`http://127.0.0.1:${port}/big`, {}, '{}', { policy, timeoutMs: 2000, maxResponseBytes: 65536 })).resolves.toEqual({ status: 200 });
    await expect(sendWebhook('http://127.0.0.1:9/', {}, '{}', { policy: new TargetPolicy(''), timeoutMs: 2000, maxResponseBytes: 65536 })).rejects.toThrow(/may not reach/);
  });
});
