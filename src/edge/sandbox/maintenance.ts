/**
 * Maintenance windows: the platform's weekly matching-engine restart, reproduced. During a window every
 * order route answers 425 `{"error":"service not ready"}` (edge/sandbox/gate.ts): nothing is placed or
 * canceled, open orders stay on their books, reads keep working. A post-only period follows, in which an
 * order without `postOnly` is refused with 503 `post-only mode: ...` (routes/clob/trading.ts) and cancels and
 * post-only orders are accepted, as on the platform (its docs: two minutes after each restart).
 *
 * Windows come from the configuration (`sandbox.maintenance.weekly`: a day and a UTC time, each lasting
 * `durationSeconds`) and from the admin API (POST /admin/sandbox/maintenance: one from now). The phase at a
 * time is a pure function of the schedule, the admin window and the clock: no timer, nothing to recover
 * (an admin window ends with the process, as a restart would end the real one). DELETE ends the admin
 * window and skips the scheduled window in progress, post-only periods included.
 */
import type { Clock } from '../../runtime/clock.ts';
import type { Config } from '../../runtime/config.ts';
import type { MaintenanceState } from '../schemas/sandbox.ts';

const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

export type MaintenanceSettings = Config['sandbox']['maintenance'];
export type Phase = 'open' | 'maintenance' | 'post-only';

/** One window: order routes refused in [start, end), orders without postOnly in [end, postOnlyEnd). */
interface Window {
  start: number;
  end: number;
  postOnlyEnd: number;
}

export interface PhaseAt {
  phase: Phase;
  /** ms when the phase ends (undefined while open). */
  until: number | undefined;
}

const OPEN: Readonly<PhaseAt> = Object.freeze({ phase: 'open', until: undefined });

export class MaintenanceWindows {
  /** The admin's window, with the lengths it was started with (what state() reports while it lasts). */
  private admin: (Window & { durationSeconds: number; postOnlySeconds: number }) | undefined;
  /** Start of a scheduled window ended early by the admin API: skipped. */
  private skipped = -1;

  constructor(
    readonly settings: Readonly<MaintenanceSettings>,
    private readonly clock: Clock,
  ) {}

  /** Where trading stands at `now`: a window's phase wins over a post-only period, the later end of each is told. */
  phaseAt(now = this.clock.now()): Readonly<PhaseAt> {
    // Asked once per order request: nothing to compute (or allocate) without a schedule or an admin window.
    if (this.admin === undefined && this.settings.weekly.length === 0) return OPEN;
    let maintenanceEnd = -1;
    let postOnlyEnd = -1;
    for (const w of this.windows(now)) {
      if (now < w.start || now >= w.postOnlyEnd) continue;
      if (now < w.end) maintenanceEnd = Math.max(maintenanceEnd, w.end);
      else postOnlyEnd = Math.max(postOnlyEnd, w.postOnlyEnd);
    }
    if (maintenanceEnd >= 0) return { phase: 'maintenance', until: maintenanceEnd };
    if (postOnlyEnd >= 0) return { phase: 'post-only', until: postOnlyEnd };
    return OPEN;
  }

  /** Admin: a window from now, then its post-only period (default: the configured one). */
  start(durationSeconds: number, postOnlySeconds = this.settings.postOnlySeconds): void {
    const now = this.clock.now();
    this.admin = { start: now, end: now + durationSeconds * 1000, postOnlyEnd: now + (durationSeconds + postOnlySeconds) * 1000, durationSeconds, postOnlySeconds };
  }

  /** Admin: trading reopens now; a scheduled window in progress (or its post-only period) is skipped. */
  end(): void {
    const now = this.clock.now();
    this.admin = undefined;
    for (const w of this.scheduled(now)) if (now >= w.start && now < w.postOnlyEnd) this.skipped = w.start;
  }

  /** Start of the next scheduled window after `now`; undefined without a schedule. */
  nextScheduled(now = this.clock.now()): number | undefined {
    let next: number | undefined;
    for (const w of this.scheduled(now)) {
      const s = w.start > now ? w.start : w.start + WEEK_MS;
      if (next === undefined || s < next) next = s;
    }
    return next;
  }

  /**
   * Where trading stands and the schedule. The lengths are the admin window's while it or its post-only
   * period lasts (what was set: the answer of its start echoes it), else the schedule's.
   */
  state(now = this.clock.now()): MaintenanceState {
    const p = this.phaseAt(now);
    const next = this.nextScheduled(now);
    const s = this.settings;
    const lengths = this.admin !== undefined && now < this.admin.postOnlyEnd ? this.admin : s;
    return {
      phase: p.phase,
      until: p.until === undefined ? null : new Date(p.until).toISOString(),
      weekly: s.weekly.map((w) => ({ day: w.day, at: w.at })),
      durationSeconds: lengths.durationSeconds,
      postOnlySeconds: lengths.postOnlySeconds,
      nextScheduled: next === undefined ? null : new Date(next).toISOString(),
    };
  }

  private windows(now: number): Window[] {
    const out = this.scheduled(now).filter((w) => w.start !== this.skipped);
    if (this.admin !== undefined) out.push(this.admin);
    return out;
  }

  /** Each weekly entry's latest occurrence starting at or before `now`. */
  private scheduled(now: number): Window[] {
    const s = this.settings;
    const today = now - (((now % DAY_MS) + DAY_MS) % DAY_MS);
    const weekday = new Date(today).getUTCDay();
    return s.weekly.map((entry) => {
      const [hh, mm] = entry.at.split(':').map(Number);
      let start = today + ((WEEKDAYS.indexOf(entry.day) - weekday + 7) % 7) * DAY_MS + (hh * 60 + mm) * 60_000;
      if (start > now) start -= WEEK_MS;
      const end = start + s.durationSeconds * 1000;
      return { start, end, postOnlyEnd: end + s.postOnlySeconds * 1000 };
    });
  }
}
