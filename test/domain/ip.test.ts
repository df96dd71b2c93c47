import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressPrefix, clientAddress, compileIpList, ipInCidrList, normalizeIp } from '../../src/domain/ip.ts';

test('clientAddress', () => {
  const trusted = ['10.0.0.0/8', '192.168.1.10', 'fd00::/8'];
  const cases: { name: string; remote: string; xff: string | undefined; proxies: readonly string[]; expected: string }[] = [
    { name: 'no proxies configured: peer', remote: '203.0.113.5', xff: '1.2.3.4', proxies: [], expected: '203.0.113.5' },
    { name: 'untrusted peer: spoofed XFF ignored', remote: '203.0.113.5', xff: '1.2.3.4', proxies: trusted, expected: '203.0.113.5' },
    { name: 'trusted peer (CIDR v4), one hop', remote: '10.1.2.3', xff: '198.51.100.7', proxies: trusted, expected: '198.51.100.7' },
    { name: 'trusted peer (single IP)', remote: '192.168.1.10', xff: '198.51.100.7', proxies: trusted, expected: '198.51.100.7' },
    { name: 'right-most untrusted wins over client-supplied prefix', remote: '10.0.0.1', xff: '6.6.6.6, 198.51.100.7', proxies: trusted, expected: '198.51.100.7' },
    { name: 'trusted hops skipped', remote: '10.0.0.1', xff: '198.51.100.7, 10.9.9.9, 192.168.1.10', proxies: trusted, expected: '198.51.100.7' },
    { name: 'all hops trusted: left-most', remote: '10.0.0.1', xff: '10.0.0.7,10.0.0.8', proxies: trusted, expected: '10.0.0.7' },
    { name: 'trusted peer without XFF', remote: '10.0.0.1', xff: undefined, proxies: trusted, expected: '10.0.0.1' },
    { name: 'IPv4-mapped peer equals its IPv4', remote: '::ffff:10.0.0.1', xff: '198.51.100.7', proxies: trusted, expected: '198.51.100.7' },
    { name: 'uWS expanded mapped peer', remote: '0000:0000:0000:0000:0000:ffff:0a00:0001', xff: '198.51.100.7', proxies: trusted, expected: '198.51.100.7' },
    { name: 'mapped untrusted peer normalised', remote: '0000:0000:0000:0000:0000:ffff:cb00:7105', xff: '1.2.3.4', proxies: trusted, expected: '203.0.113.5' },
    { name: 'trusted peer (CIDR v6), v6 client', remote: 'fd12::1', xff: '2001:DB8::0001', proxies: trusted, expected: '2001:db8::1' },
    { name: 'v6 peer outside CIDR', remote: 'fe80::1', xff: '2001:db8::1', proxies: trusted, expected: 'fe80::1' },
    { name: 'ports and brackets stripped', remote: '10.0.0.1', xff: '[2001:db8::2]:443, 198.51.100.9:5555', proxies: trusted, expected: '198.51.100.9' },
    { name: 'garbage hop stops at last trusted hop', remote: '10.0.0.1', xff: '1.2.3.4, not-an-ip, 10.0.0.2', proxies: trusted, expected: '10.0.0.2' },
    { name: 'mapped IPv4 client in XFF', remote: '10.0.0.1', xff: '::ffff:198.51.100.7', proxies: trusted, expected: '198.51.100.7' },
  ];
  for (const c of cases) {
    assert.equal(clientAddress(c.remote, c.xff, c.proxies), c.expected, c.name);
  }
});

test('ipInCidrList and normalizeIp', () => {
  const list = ['127.0.0.1', '10.0.0.0/8', '2001:db8::/32', '::ffff:172.16.0.0/108'];
  const cases = [
    { ip: '127.0.0.1', expected: true },
    { ip: '::ffff:127.0.0.1', expected: true },
    { ip: '127.0.0.2', expected: false },
    { ip: '10.255.255.255', expected: true },
    { ip: '11.0.0.0', expected: false },
    { ip: '2001:db8:ffff::1', expected: true },
    { ip: '2001:db9::1', expected: false },
    { ip: '172.16.3.4', expected: true },
    { ip: '172.32.0.1', expected: false },
    { ip: 'garbage', expected: false },
  ];
  for (const c of cases) assert.equal(ipInCidrList(c.ip, list), c.expected, c.ip);
  assert.equal(ipInCidrList('127.0.0.1', []), false);
  assert.throws(() => compileIpList(['10.0.0.0/33']), /10\.0\.0\.0\/33/);
  assert.throws(() => compileIpList(['nope']), /nope/);
  assert.equal(normalizeIp(' ::FFFF:1.2.3.4 '), '1.2.3.4');
  assert.equal(normalizeIp('fe80::1%eth0'), 'fe80::1');
  assert.equal(normalizeIp('x'), '');
});

test('addressPrefix: the /24 of IPv4, the /64 of IPv6, canonical text; anything else is its own', () => {
  const cases: { input: string; v4?: number; v6?: number; expected: string }[] = [
    { input: '203.0.113.77', expected: '203.0.113.0/24' },
    { input: '203.0.113.77', v4: 16, expected: '203.0.0.0/16' },
    { input: '203.0.113.77', v4: 32, expected: '203.0.113.77/32' },
    { input: '0000:0000:0000:0000:0000:ffff:cb00:714d', expected: '203.0.113.0/24' },
    { input: '2001:DB8:1:2:aaaa:bbbb:cccc:dddd', expected: '2001:db8:1:2::/64' },
    { input: '2001:db8:1:2::9', expected: '2001:db8:1:2::/64' },
    { input: '2001:db8:1:2::9', v6: 48, expected: '2001:db8:1::/48' },
    { input: '2001:db8:1:2ff::9', v6: 56, expected: '2001:db8:1:200::/56' },
    { input: '::1', expected: '::/64' },
    { input: 'not-an-ip', expected: 'not-an-ip' },
  ];
  for (const c of cases) assert.equal(addressPrefix(c.input, c.v4, c.v6), c.expected, c.input);
});
