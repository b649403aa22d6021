import { BlockList, isIP } from 'node:net';

/**
 * Where webhooks may send (docs/webhooks.md "Where webhooks may send"): never to loopback,
 * private, link-local (cloud metadata), multicast or reserved addresses — unless the operator
 * allows them with PLINTH_WEBHOOK_ALLOW_HOSTS. The URL's host is checked when a webhook is
 * saved (literal addresses) and every address a name resolves to is checked again when the
 * connection is made (so a name that later resolves inward — DNS rebinding — is still refused).
 */
const BLOCKED = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED.addSubnet(net, bits, 'ipv6');
}

/** An IPv4 address written as IPv6 (`::ffff:127.0.0.1`): the IPv4 address; else null. */
function mappedIpv4(address: string): string | null {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1]! : null;
}

/** True when `address` (an IP literal) is one webhooks never reach unless allowed. */
export function isBlockedAddress(address: string): boolean {
  const v4 = mappedIpv4(address);
  if (v4) return isBlockedAddress(v4);
  const family = isIP(address);
  if (family === 0) return true;
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The URL's host without IPv6 brackets, lower-cased. */
export function urlHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

/**
 * The operator's exceptions (PLINTH_WEBHOOK_ALLOW_HOSTS, comma-separated): a host name or IP
 * literal allows URLs whose host is written exactly so (`127.0.0.1` allows
 * `http://127.0.0.1:9000/` but not `http://localhost:9000/`); a CIDR (`10.1.0.0/16`) allows
 * every address in it, whatever name resolved to it.
 */
export class TargetPolicy {
  private readonly hosts = new Set<string>();
  private readonly ranges = new BlockList();

  constructor(allowList = '') {
    for (const raw of allowList.split(',')) {
      const entry = raw.trim().toLowerCase();
      if (!entry) continue;
      const slash = entry.indexOf('/');
      if (slash > 0) {
        const net = entry.slice(0, slash);
        const bits = Number(entry.slice(slash + 1));
        const family = isIP(net);
        if (family === 0 || !Number.isInteger(bits)) throw new TypeError(`PLINTH_WEBHOOK_ALLOW_HOSTS: ${entry} is not a CIDR`);
        this.ranges.addSubnet(net, bits, family === 4 ? 'ipv4' : 'ipv6');
      } else {
        this.hosts.add(entry.replace(/^\[(.*)\]$/, '$1'));
      }
    }
  }

  /** True when the operator allowed this host as written in the URL. */
  allowsHost(host: string): boolean {
    return this.hosts.has(host.toLowerCase());
  }

  /** True when a connection to `address` (resolved) may be made. */
  allowsAddress(address: string): boolean {
    const v4 = mappedIpv4(address) ?? address;
    const family = isIP(v4);
    if (family !== 0 && this.ranges.check(v4, family === 4 ? 'ipv4' : 'ipv6')) return true;
    return !isBlockedAddress(address);
  }

  /**
   * Why `raw` cannot be a webhook URL (checked when it is saved), or null: only http/https, no
   * credentials in it, and a literal address host must be allowed. Names are checked when sent.
   */
  urlProblem(raw: string): string | null {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return 'url must be an absolute http or https URL';
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'url must use http or https';
    if (url.username || url.password) return 'url must not carry credentials';
    const host = urlHost(url);
    if (this.allowsHost(host)) return null;
    if (isIP(host) !== 0 && !this.allowsAddress(host)) return 'url points at a loopback, private, link-local or reserved address';
    if (host === '' ) return 'url must have a host';
    return null;
  }
}
