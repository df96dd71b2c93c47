/**
 * Maintenance windows (src/edge/sandbox/maintenance.ts) on a ManualClock: a weekly window's phases at its
 * edges (maintenance from its start, post-only from its end, open after the post-only period), across
 * the week's wrap-around and on every weekday; an admin window from now, which wins over nothing it
 * should not; end() reopening at once and skipping the scheduled window in progress; the next window.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MaintenanceWindows, type MaintenanceSettings } from '../../../src/edge/sandbox/maintenance.ts';
import { ManualClock } from '../../../src/runtime/clock.ts';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
// Tuesday 2026-03-03, 11:00 UTC.
const TUE_11 = Date.UTC(2026, 2, 3, 11, 0);

const settings = (over: Partial<MaintenanceSettings> = {}): MaintenanceSettings => ({ weekly: [{ day: 'tue', at: '11:00' }], durationSeconds: 90, postOnlySeconds: 120, ...over });

test('a weekly window: maintenance from its start for its length, then post-only, then open', () => {
  const clock = new ManualClock(TUE_11 - 1);
  const m = new MaintenanceWindows(settings(), clock);
  assert.deepEqual(m.phaseAt(), { phase: 'open', until: undefined });
  assert.equal(m.nextScheduled(), TUE_11);
  assert.deepEqual(m.phaseAt(TUE_11), { phase: 'maintenance', until: TUE_11 + 90_000 });
  assert.deepEqual(m.phaseAt(TUE_11 + 89_999), { phase: 'maintenance', until: TUE_11 + 90_000 });
  assert.deepEqual(m.phaseAt(TUE_11 + 90_000), { phase: 'post-only', until: TUE_11 + 210_000 });
  assert.deepEqual(m.phaseAt(TUE_11 + 210_000), { phase: 'open', until: undefined });
  // A week later, the same; in between, open.
  for (let d = 1; d < 7; d++) assert.equal(m.phaseAt(TUE_11 + d * DAY + MIN).phase, 'open', `day ${d}`);
  assert.equal(m.phaseAt(TUE_11 + 7 * DAY + MIN).phase, 'maintenance');
  assert.equal(m.nextScheduled(TUE_11 + MIN), TUE_11 + 7 * DAY);
});

test('every weekday, and a window that runs past midnight into the next week', () => {
  const days = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
  for (const [i, day] of days.entries()) {
    const start = Date.UTC(2026, 2, 1 + i, 23, 59); // 2026-03-01 is a Sunday
    const m = new MaintenanceWindows(settings({ weekly: [{ day, at: '23:59' }], durationSeconds: 300, postOnlySeconds: 0 }), new ManualClock(start));
    assert.deepEqual(m.phaseAt(start + 2 * MIN), { phase: 'maintenance', until: start + 5 * MIN }, day);
    assert.equal(m.phaseAt(start - 1).phase, 'open', day);
    assert.equal(m.phaseAt(start + 5 * MIN).phase, 'open', `${day}: no post-only period configured`);
  }
});

test('an admin window starts now with its own post-only period; end() reopens at once and skips the scheduled one', () => {
  const clock = new ManualClock(TUE_11 - DAY);
  const m = new MaintenanceWindows(settings({ weekly: [] }), clock);
  assert.equal(m.nextScheduled(), undefined);
  m.start(30, 10);
  assert.deepEqual(m.phaseAt(), { phase: 'maintenance', until: clock.now() + 30_000 });
  clock.advance(30_000);
  assert.deepEqual(m.phaseAt(), { phase: 'post-only', until: clock.now() + 10_000 });
  m.end();
  assert.deepEqual(m.phaseAt(), { phase: 'open', until: undefined });
  m.start(30); // the configured post-only period
  clock.advance(30_000);
  assert.deepEqual(m.phaseAt(), { phase: 'post-only', until: clock.now() + 120_000 });

  const s = new MaintenanceWindows(settings(), new ManualClock(TUE_11 + MIN));
  s.start(600, 0);
  assert.deepEqual(s.phaseAt(), { phase: 'maintenance', until: TUE_11 + MIN + 600_000 }, 'the later end of the two windows');
  s.end();
  assert.equal(s.phaseAt().phase, 'open', 'the scheduled window in progress is skipped');
  assert.equal(s.phaseAt(TUE_11 + 7 * DAY + MIN).phase, 'maintenance', 'but not next week\'s');
  const st = s.state(TUE_11 + 2 * MIN);
  assert.deepEqual(st, { phase: 'open', until: null, weekly: [{ day: 'tue', at: '11:00' }], durationSeconds: 90, postOnlySeconds: 120, nextScheduled: new Date(TUE_11 + 7 * DAY).toISOString() });
});
