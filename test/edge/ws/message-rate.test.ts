/**
 * One socket's message rate (src/edge/ws/message-rate.ts), on injected clock readings: a burst of N passes,
 * the next is refused until a token has refilled, and a socket is closed past 2N refusals within
 * STRIKE_WINDOW_MS of the first, a count that starts again after the window.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageRate, STRIKE_WINDOW_MS } from '../../../src/edge/ws/message-rate.ts';

test('a burst of N messages passes, the next waits for a token refilled at N per second', () => {
  const r = new MessageRate(4, 1000);
  for (let i = 0; i < 4; i++) assert.equal(r.admit(1000), true, `message ${i + 1}`);
  assert.equal(r.admit(1000), false, 'the fifth at once');
  assert.equal(r.admit(1200), false, '200 ms: 0.8 of a token');
  assert.equal(r.admit(1250), true, '250 ms: one token');
  assert.equal(r.admit(1250), false, 'and only one');
  assert.equal(r.admit(3000), true, 'after a long pause');
  for (let i = 0; i < 3; i++) assert.equal(r.admit(3000), true, 'the bucket holds N, no more');
  assert.equal(r.admit(3000), false);
});

test('more than 2N refusals within the window close the socket; the count starts again after it', () => {
  const r = new MessageRate(3, 0);
  for (let i = 1; i <= 6; i++) assert.equal(r.strike(100 * i), false, `refusal ${i}`);
  assert.equal(r.strike(700), true, 'the seventh within the window');

  const s = new MessageRate(3, 0);
  for (let i = 0; i < 6; i++) s.strike(10);
  assert.equal(s.strike(10 + STRIKE_WINDOW_MS + 1), false, 'past the window the count is one again');
  for (let i = 0; i < 5; i++) assert.equal(s.strike(10 + STRIKE_WINDOW_MS + 2), false);
  assert.equal(s.strike(10 + STRIKE_WINDOW_MS + 3), true);
});
