import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { entryBytes, MAX_HEADER_NAME_CHARS, MAX_LOG_BYTES, MAX_METHOD_CHARS, MAX_PATH_CHARS, RefusalLog } from '../../../src/edge/refusals/log.ts';
import { MAX_REASON_CHARS } from '../../../src/edge/refusals/reason.ts';
import { collectGarbage } from '../../fixtures/gc.ts';

const entry = (n: number, headers: string[] = ['poly_api_key']) => ({ at: n, method: 'POST', path: '/order', headers, class: 'auth_hmac' as const, reason: `r${n}` });

test('a wallet lists its own refusals, newest first, at most perWallet of them', () => {
  const log = new RefusalLog(() => true, 3);
  for (let i = 1; i <= 5; i++) log.record('0xa', entry(i));
  log.record('0xb', entry(9));
  assert.deepEqual(log.list('0xa').map((e) => e.reason), ['r5', 'r4', 'r3']);
  assert.deepEqual(log.list('0xb').map((e) => e.reason), ['r9']);
  assert.deepEqual(log.list('0xc'), []);
});

test('only wallets that could read their list are kept, and at most maxWallets of them (the least recently refused leaves)', () => {
  const log = new RefusalLog((w) => w !== '0xnokey', 10, 2);
  log.record('0xnokey', entry(1));
  assert.equal(log.wallets, 0);
  log.record('0xa', entry(1));
  log.record('0xb', entry(2));
  log.record('0xa', entry(3)); // 0xa refused again: 0xb is now the oldest
  log.record('0xc', entry(4));
  assert.equal(log.wallets, 2);
  assert.deepEqual(log.list('0xb'), []);
  assert.deepEqual(log.list('0xa').map((e) => e.reason), ['r3', 'r1']);
  assert.deepEqual(log.list('0xc').map((e) => e.reason), ['r4']);
});

test('an entry keeps at most 40 header names, each field cut to its bound', () => {
  const log = new RefusalLog(() => true);
  log.record('0xa', {
    at: 1,
    method: 'M'.repeat(5000),
    path: '/' + 'p'.repeat(10_000),
    headers: Array.from({ length: 100 }, (_, i) => `x-h${i}-${'n'.repeat(400)}`),
    class: 'auth_header',
    reason: 'r'.repeat(5000),
  });
  const [e] = log.list('0xa');
  assert.equal(e!.headers.length, 40);
  assert.ok(e!.headers.every((h) => h.length === MAX_HEADER_NAME_CHARS && h.endsWith('...')));
  assert.equal(e!.headers[7]!.slice(0, 5), 'x-h7-');
  assert.equal(e!.method.length, MAX_METHOD_CHARS);
  assert.equal(e!.path.length, MAX_PATH_CHARS);
  assert.equal(e!.reason.length, MAX_REASON_CHARS);
});

test('the bytes held stay under maxBytes: the least recently refused wallets leave first', () => {
  const log = new RefusalLog(() => true, 100, 10_000, 64 * 1024);
  const long = (n: number) => ({ ...entry(n, Array.from({ length: 40 }, (_, i) => `h${i}`.padEnd(60, 'x'))), path: '/' + 'p'.repeat(300), reason: 'why '.repeat(200) });
  for (let w = 0; w < 50; w++) for (let i = 0; i < 3; i++) log.record(`0x${w}`, long(i));
  assert.ok(log.bytes <= 64 * 1024, `${log.bytes} bytes held`);
  // Each entry is accounted at its bounded size; the newest wallets are the ones left.
  const one = entryBytes(log.list('0x49')[0]!);
  assert.ok(one > 5000 && one < 7000, `an entry of the worst kind is ${one} bytes`);
  assert.equal(log.list('0x49').length, 3);
  assert.deepEqual(log.list('0x0'), []);
  assert.ok(log.wallets >= 2 && log.wallets <= 4, `${log.wallets} wallets kept`);
});

test(`a flood of the worst entries a client can send (random long header names, many wallets) holds the heap to the log's bound (${MAX_LOG_BYTES / 2 ** 20} MiB)`, { timeout: 120_000 }, () => {
  const gc = collectGarbage();
  const log = new RefusalLog(() => true);
  gc();
  const heap0 = process.memoryUsage().heapUsed;
  // 100 wallets x 100 refusals, each with 20 made-up 800-character header names, a long path and a long
  // reason: 160 MB of names as sent. A log that kept them (or slices of them) would hold all of it.
  for (let w = 0; w < 100; w++) {
    const wallet = `0x${w.toString(16).padStart(40, '0')}`;
    for (let i = 0; i < 100; i++) {
      const names = Array.from({ length: 20 }, () => randomBytes(400).toString('hex'));
      log.record(wallet, { at: i, method: 'POST', path: `/order/${randomBytes(2000).toString('hex')}`, headers: names, class: 'auth_header', reason: `missing L2 headers; ${names.join(', ')}` });
    }
  }
  gc();
  const grown = process.memoryUsage().heapUsed - heap0;
  assert.ok(log.bytes <= MAX_LOG_BYTES, `${log.bytes} bytes accounted`);
  // The accounting counts two bytes a character; V8 keeps these one-byte strings in one, so the heap holds
  // less than what is accounted, plus the Map and arrays.
  assert.ok(grown < MAX_LOG_BYTES * 1.5, `heap grew by ${(grown / 2 ** 20).toFixed(1)} MiB for ${log.wallets} wallets`);
  // The newest wallets are kept whole.
  assert.equal(log.list(`0x${(99).toString(16).padStart(40, '0')}`).length, 100);
});
