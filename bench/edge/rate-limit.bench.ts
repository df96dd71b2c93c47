/**
 * RateLimiter.take() throughput.
 *
 * Workload: the 20 default buckets configured (so slots have their production stride); 10,000 callers keyed
 * like client addresses, pre-registered before timing; each call charges the 3 buckets of GET /events
 * (catalog + catalog-events + catalog-listing), cost 1, callers visited round-robin by a stride that is
 * coprime with 10,000 so consecutive calls touch unrelated slots. Two tasks:
 *   - all admitted: limits raised 100,000x, clock +1 ms every 64 calls (64 calls per caller per 10 s
 *     window), so every call takes the full check + charge path and window rolls are included;
 *   - refused: the default caps with every caller's catalog-events bucket filled to its 500 before timing,
 *     clock +1 ms every 65,536 calls (stays inside one window), so every call takes the refusal path
 *     (check, then the Retry-After computation).
 * One tinybench iteration = BATCH take() calls, because a single call is far below the timer's resolution;
 * the reported figure is BATCH * iterations / s. Excluded from timing: building the key strings and the
 * route array, registering the callers. Included: the Verdict allocation per call.
 *
 * Self-check: the first task must admit every call and hold exactly 10,000 callers; the second must refuse
 * every call.
 *
 * Run alone: npx tsx bench/edge/rate-limit.bench.ts
 */
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { RateLimiter, type BucketSpec } from '../../src/edge/limits/rate-limit.ts';
import { DEFAULT_BUCKETS, bucketsFor } from '../../src/edge/limits/rate-limit-buckets.ts';

const CALLERS = 10_000;
const BATCH = 1_000;
const STRIDE = 7_919;
const T0 = 1_700_000_400_000;

function raised(buckets: Record<string, BucketSpec>, factor: number): Record<string, BucketSpec> {
  return Object.fromEntries(
    Object.entries(buckets).map(([name, spec]) => [name, { limit: spec.limit * factor, windowSeconds: spec.windowSeconds }]),
  );
}

export default async function run(): Promise<void> {
  const keys = Array.from({ length: CALLERS }, (_, i) => `198.51.${i >> 8}.${i & 255}`);
  const route = bucketsFor('GET', '/events');
  if (route.length !== 3) throw new Error('GET /events should charge 3 buckets');

  const admitting = new RateLimiter({ enabled: true, maxCallers: CALLERS * 2, buckets: raised(DEFAULT_BUCKETS, 100_000) });
  const saturated = new RateLimiter({ enabled: true, maxCallers: CALLERS * 2, buckets: DEFAULT_BUCKETS });
  for (const k of keys) {
    admitting.take(k, route, 0, T0);
    saturated.take(k, route, 500, T0);
  }

  const cursor = (limiter: RateLimiter, callsPerMsShift: number) => {
    let i = 0;
    let calls = 0;
    let admitted = 0;
    return {
      batch(): void {
        for (let n = 0; n < BATCH; n++) {
          i = (i + STRIDE) % CALLERS;
          if (limiter.take(keys[i]!, route, 1, T0 + (calls++ >> callsPerMsShift)).ok) admitted++;
        }
      },
      get admitted() {
        return admitted;
      },
      get calls() {
        return calls;
      },
    };
  };
  const a = cursor(admitting, 6);
  const s = cursor(saturated, 16);

  const bench = new Bench({ name: 'rate-limit take()', time: 1_000, warmup: true });
  bench.add(`take() x${BATCH}, 3 buckets, 10k callers, all admitted`, () => a.batch());
  bench.add(`take() x${BATCH}, 3 buckets, 10k callers, refused`, () => s.batch());
  await bench.run();

  if (a.admitted !== a.calls) throw new Error(`admitting limiter refused ${a.calls - a.admitted} calls`);
  if (admitting.size !== CALLERS) throw new Error(`expected ${CALLERS} callers, got ${admitting.size}`);

  if (s.admitted !== 0) throw new Error(`saturated limiter admitted ${s.admitted} calls`);

  console.log(bench.name);
  console.table(bench.table());
  for (const task of bench.tasks) {
    const hz = task.result && 'throughput' in task.result ? task.result.throughput.mean : Number.NaN;
    console.log(`${task.name}: ${Math.round(hz * BATCH).toLocaleString('en-US')} take()/s`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
