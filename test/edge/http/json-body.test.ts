/**
 * The nesting bound of JSON bodies (src/edge/http/json-body.ts): the same verdict whether a body is scanned whole
 * or piece by piece as it arrives (http.ts feeds DepthScan each chunk uWS hands it), strings skipped even when
 * a piece ends inside one or between a backslash and the character it escapes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DepthScan, MAX_JSON_DEPTH, depthExceeds, parseJsonBody, parseScannedJsonBody } from '../../../src/edge/http/json-body.ts';

const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

/** Feeds `text` to a fresh scan in pieces of `size` bytes; its verdict after the last piece. */
function inPieces(text: string, size: number, max = MAX_JSON_DEPTH): boolean {
  const bytes = Buffer.from(text);
  const scan = new DepthScan(max);
  let exceeded = false;
  for (let i = 0; i < bytes.length; i += size) exceeded = scan.feed(bytes.subarray(i, i + size));
  return exceeded;
}

const cases: { name: string; text: string; exceeds: boolean }[] = [
  { name: 'the bound itself', text: nested(MAX_JSON_DEPTH), exceeds: false },
  { name: 'one level past it', text: nested(MAX_JSON_DEPTH + 1), exceeds: true },
  { name: 'objects and arrays mixed', text: '{"a":'.repeat(20) + '['.repeat(13) + ']'.repeat(13) + '}'.repeat(20), exceeds: true },
  { name: 'siblings do not add up', text: `[${Array(100).fill(nested(30)).join(',')}]`, exceeds: false },
  { name: 'brackets inside a string', text: `{"pad":"${'['.repeat(500)}"}`, exceeds: false },
  { name: 'an escaped quote does not end the string', text: `{"pad":"\\"${'['.repeat(500)}"}`, exceeds: false },
  { name: 'an escaped backslash before the closing quote', text: `["\\\\",${nested(MAX_JSON_DEPTH)}]`, exceeds: true },
  { name: 'a megabyte of [[[[', text: nested(500_000), exceeds: true },
];

for (const c of cases) {
  test(`nesting bound, whole and in pieces of 1, 2, 3, 7 and 64 bytes: ${c.name}`, () => {
    assert.equal(depthExceeds(Buffer.from(c.text), MAX_JSON_DEPTH), c.exceeds);
    for (const size of [1, 2, 3, 7, 64]) assert.equal(inPieces(c.text, size), c.exceeds, `pieces of ${size}`);
  });
}

test('a scan past the bound stays past it, whatever comes after', () => {
  const scan = new DepthScan(2);
  assert.equal(scan.feed(Buffer.from('[[[')), true);
  assert.equal(scan.feed(Buffer.from(']]]')), true);
  assert.equal(scan.exceeded, true);
});

test('parseJsonBody: too deep before JSON.parse runs, invalid after, absent or empty is undefined', () => {
  assert.deepEqual(parseJsonBody(Buffer.from(nested(MAX_JSON_DEPTH + 1))), { ok: false, reason: 'too-deep' });
  assert.deepEqual(parseJsonBody(Buffer.from('[1,')), { ok: false, reason: 'invalid' });
  assert.deepEqual(parseJsonBody(Buffer.from(nested(3))), { ok: true, value: [[[]]] });
  assert.deepEqual(parseJsonBody(undefined), { ok: true, value: undefined });
  assert.deepEqual(parseJsonBody(Buffer.alloc(0)), { ok: true, value: undefined });
});

test('parseScannedJsonBody: a body http.ts already bounded is parsed without a second scan (its depth is not looked at again)', () => {
  assert.deepEqual(parseScannedJsonBody(Buffer.from(nested(MAX_JSON_DEPTH + 1))).ok, true);
  assert.deepEqual(parseScannedJsonBody(Buffer.from('[1,')), { ok: false, reason: 'invalid' });
  assert.deepEqual(parseScannedJsonBody(Buffer.alloc(0)), { ok: true, value: undefined });
});
