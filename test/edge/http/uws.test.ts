/**
 * The uWS loader (src/edge/http/uws.ts): which binary it picks for which glibc, the pinned input and output
 * hashes of the compatible copy, the refusal of any other input, the cache, and a copy that loads in a
 * fresh process and answers a request whose header names carry underscores.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PINNED, PINNED_PACKAGE, UwsLoadError, chooseSource, compatibleCopy, glibcAtLeast, installedPackage, loadUws } from '../../../src/edge/http/uws.ts';
import { tempDir } from '../../fixtures/edge.ts';

const FILE = 'uws_linux_x64_115.node';
const pin = PINNED[FILE]!;

test('the installed package is the pinned one', () => {
  assert.equal(installedPackage().spec, PINNED_PACKAGE);
});

test('glibc >= 2.38 or no glibc: the published binary; older glibc: the compatible copy, if one is pinned', () => {
  assert.equal(chooseSource({ platform: 'linux', glibc: '2.38', binary: FILE }).source, 'published');
  assert.equal(chooseSource({ platform: 'linux', glibc: '2.41', binary: FILE }).source, 'published');
  assert.equal(chooseSource({ platform: 'linux', glibc: '3.0', binary: FILE }).source, 'published');
  assert.equal(chooseSource({ platform: 'darwin', glibc: undefined, binary: 'uws_darwin_arm64_115.node' }).source, 'published');
  assert.equal(chooseSource({ platform: 'linux', glibc: undefined, binary: 'uws_linux_x64_115.node' }).source, 'published', 'musl: no glibc imports');
  const old = chooseSource({ platform: 'linux', glibc: '2.36', binary: FILE });
  assert.equal(old.source, 'compatible copy');
  assert.match(old.reason, /2\.36/);
  assert.throws(() => chooseSource({ platform: 'linux', glibc: '2.31', binary: 'uws_linux_arm64_115.node' }), (e: unknown) => e instanceof UwsLoadError && /no compatible copy/.test(e.message));
  assert.ok(glibcAtLeast('2.38', [2, 38]) && !glibcAtLeast('2.9', [2, 38]) && glibcAtLeast('2.100', [2, 38]));
});

test('the compatible copy: pinned input, pinned output, written once, rewritten if damaged', () => {
  const pkg = installedPackage();
  const cache = tempDir();
  const copy = compatibleCopy(join(pkg.dir, FILE), pin, cache, FILE);
  assert.ok(copy.startsWith(cache));
  const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
  assert.equal(sha(copy), pin.copySha256);
  const first = statSync(copy).mtimeMs;
  assert.equal(compatibleCopy(join(pkg.dir, FILE), pin, cache, FILE), copy);
  assert.equal(statSync(copy).mtimeMs, first, 'a good cached copy is reused, not rewritten');
  writeFileSync(copy, 'damaged');
  assert.equal(sha(compatibleCopy(join(pkg.dir, FILE), pin, cache, FILE)), pin.copySha256, 'a damaged copy is made again');
});

test('any input other than the pinned binary is refused with both hashes named', () => {
  const pkg = installedPackage();
  const dir = tempDir();
  const tampered = join(dir, FILE);
  copyFileSync(join(pkg.dir, FILE), tampered);
  const bytes = readFileSync(tampered);
  bytes[1000] = bytes[1000]! ^ 1;
  writeFileSync(tampered, bytes);
  assert.throws(
    () => compatibleCopy(tampered, pin, join(dir, 'cache'), FILE),
    (e: unknown) => e instanceof UwsLoadError && e.message.includes(pin.sha256) && /refusing/.test(e.message),
  );
  // Another of the package's binaries is not this one either.
  assert.throws(() => compatibleCopy(join(pkg.dir, 'uws_linux_x64_127.node'), pin, join(dir, 'cache'), FILE), UwsLoadError);
});

test('the copy loads in a fresh process and passes header names with underscores through', () => {
  const pkg = installedPackage();
  const copy = compatibleCopy(join(pkg.dir, FILE), pin, tempDir(), FILE);
  const script = `
    const uws = require(${JSON.stringify(copy)});
    const app = uws.App().get('/h', (res, req) => res.end(JSON.stringify([req.getHeader('svc_api_key'), req.getHeader('poly_address')])));
    app.listen('127.0.0.1', 0, (s) => {
      const net = require('node:net');
      const c = net.connect(uws.us_socket_local_port(s), '127.0.0.1', () => c.write('GET /h HTTP/1.1\\r\\nHost: x\\r\\nSVC_API_KEY: abc\\r\\nPOLY_ADDRESS: 0x1\\r\\nConnection: close\\r\\n\\r\\n'));
      let got = '';
      c.on('data', (d) => (got += d));
      c.on('close', () => { process.stdout.write(got.slice(got.indexOf('\\r\\n\\r\\n') + 4)); process.exit(0); });
    });`;
  const out = execFileSync(process.execPath, ['-e', script], { timeout: 10_000, encoding: 'utf8' });
  assert.deepEqual(JSON.parse(out), ['abc', '0x1']);
});

test('uWS reads its header bound once per process: a second, different bound is refused', () => {
  const { build } = loadUws(16384);
  assert.ok(build.source === 'published' || build.source === 'compatible copy');
  assert.equal(build.package, PINNED_PACKAGE);
  assert.throws(() => loadUws(8192), (e: unknown) => e instanceof UwsLoadError && /16384/.test(e.message));
});
