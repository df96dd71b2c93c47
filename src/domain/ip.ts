/**
 * Client addresses: the canonical form of an IP, allowlists of IPs and CIDRs, and the address a request
 * is keyed by behind trusted proxies. Shared by the edge (rate limits, the wallet data allowlist) and the
 * configuration (which refuses a bad list at start-up).
 */
import { BlockList, SocketAddress, isIP } from 'node:net';

/**
 * Canonical form of one address token: trims, drops `[v6]:port`, `v4:port` and zone ids, lower-cases and
 * compresses IPv6, and unwraps IPv4-mapped IPv6 (uWS reports IPv4 peers on a dual-stack socket as
 * `0000:...:ffff:7f00:0001`), so one client is one rate-limit key. Returns '' for anything that is not an IP.
 */
export function normalizeIp(raw: string): string {
  let s = raw.trim();
  if (s.startsWith('[')) {
    const close = s.indexOf(']');
    if (close < 0) return '';
    s = s.slice(1, close);
  }
  const kind = isIP(s);
  if (kind === 4) return s;
  if (kind === 6) {
    const canonical = new SocketAddress({ address: s, family: 'ipv6' }).address;
    if (canonical.startsWith('::ffff:')) {
      const v4 = canonical.slice(7);
      if (isIP(v4) === 4) return v4;
    }
    return canonical;
  }
  const colon = s.lastIndexOf(':');
  if (colon > 0 && s.indexOf(':') === colon && isIP(s.slice(0, colon)) === 4) return s.slice(0, colon);
  return '';
}

/**
 * Compiles an allowlist of IPs and CIDRs (v4 and v6) into a BlockList; throws a RangeError naming the bad
 * entry, so configuration loading can reject it at start-up. allocates: once per list.
 */
export function compileIpList(list: readonly string[]): BlockList {
  const block = new BlockList();
  for (const entry of list) {
    const slash = entry.indexOf('/');
    const addr = normalizeIp(slash < 0 ? entry : entry.slice(0, slash));
    const family = isIP(addr) === 4 ? 'ipv4' : 'ipv6';
    try {
      if (addr === '') throw new RangeError('not an IP address');
      if (slash < 0) {
        block.addAddress(addr, family);
      } else {
        const prefixText = entry.slice(slash + 1).trim();
        if (!/^\d{1,3}$/.test(prefixText)) throw new RangeError('bad prefix length');
        let prefix = Number(prefixText);
        // A mapped-IPv4 CIDR (::ffff:10.0.0.0/104) was unwrapped to its IPv4 address above.
        if (family === 'ipv4' && entry.includes(':')) prefix -= 96;
        block.addSubnet(addr, prefix, family);
      }
    } catch (err) {
      throw new RangeError(`invalid IP or CIDR ${JSON.stringify(entry)}: ${(err as Error).message}`);
    }
  }
  return block;
}

const compiledLists = new WeakMap<readonly string[], BlockList>();

/** True when `ip` is one of the list's addresses or inside one of its CIDRs. IPv4-mapped IPv6 equals its IPv4. */
export function ipInCidrList(ip: string, list: readonly string[]): boolean {
  if (list.length === 0) return false;
  let block = compiledLists.get(list);
  if (block === undefined) {
    block = compileIpList(list);
    compiledLists.set(list, block);
  }
  const addr = normalizeIp(ip);
  if (addr === '') return false;
  return block.check(addr, isIP(addr) === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The address a request is keyed and allowlisted by. X-Forwarded-For is believed only when the direct peer
 * is a trusted proxy, and then only from the right: each hop appends the address it saw, so the right-most
 * entry that is not itself a trusted proxy was written by a proxy we trust; anything left of it is
 * client-supplied and spoofable. If every entry is a trusted proxy, the left-most is the furthest client we
 * know of. An entry that is not an IP stops the walk at the last trusted hop, so a misconfigured proxy
 * cannot make garbage (or an empty string) a shared key for everyone.
 */
export function clientAddress(remoteIp: string, forwardedFor: string | undefined, trustedProxies: readonly string[]): string {
  const peer = normalizeIp(remoteIp) || remoteIp;
  if (forwardedFor === undefined || forwardedFor === '' || trustedProxies.length === 0) return peer;
  if (!ipInCidrList(peer, trustedProxies)) return peer;
  const hops = forwardedFor.split(',');
  let last = peer;
  for (let h = hops.length - 1; h >= 0; h--) {
    const token = hops[h]!;
    if (token.trim() === '') continue;
    const addr = normalizeIp(token);
    if (addr === '') return last;
    if (!ipInCidrList(addr, trustedProxies)) return addr;
    last = addr;
  }
  return last;
}

/**
 * The network a client address belongs to, for shares that one operator's many addresses must not multiply
 * (the edge's fair shares of global caps and its diagnosis budget): its /v4Bits prefix for IPv4 (default
 * /24, one small network) and /v6Bits for IPv6 (default /64, what one subscriber is routed), as CIDR text
 * (`203.0.113.0/24`, `2001:db8:1:2::/64`). Anything that is not an IP is its own network.
 */
export function addressPrefix(ip: string, v4Bits = 24, v6Bits = 64): string {
  const addr = normalizeIp(ip);
  const kind = isIP(addr);
  if (kind === 4) {
    const v = addr.split('.').reduce((n, o) => n * 256 + Number(o), 0);
    const masked = v4Bits === 0 ? 0 : v - (v % 2 ** (32 - v4Bits));
    return `${[24, 16, 8, 0].map((s) => Math.floor(masked / 2 ** s) % 256).join('.')}/${v4Bits}`;
  }
  if (kind === 6) {
    const [head, tail] = addr.includes('::') ? addr.split('::') : [addr, undefined];
    const left = head === '' ? [] : head!.split(':');
    const right = tail === undefined || tail === '' ? [] : tail.split(':');
    const groups = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right].map((g) => parseInt(g, 16));
    const kept = groups.map((g, i) => {
      const bits = Math.max(0, Math.min(16, v6Bits - 16 * i));
      return bits === 0 ? 0 : g - (g % 2 ** (16 - bits));
    });
    const text = new SocketAddress({ address: kept.map((g) => g.toString(16)).join(':'), family: 'ipv6' }).address;
    return `${text}/${v6Bits}`;
  }
  return ip;
}
