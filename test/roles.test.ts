/**
 * roles.ts's SampleLog: a sequencer's sampler writes reach the replication log only in the view-writes flush
 * that issues the samples themselves (one transaction), never when the sample is taken.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ReplicationLog } from '../src/journal/replication-log.ts';
import { ViewWrites } from '../src/projections/projector.ts';
import { silentLogger } from '../src/runtime/log.ts';
import { SampleLog } from '../src/roles.ts';

test('sampler records are logged in the flush that issues the samples, in the order taken, once', () => {
  const logged: unknown[][] = [];
  const log = { logWrite: (db: string, key: unknown, value: unknown) => void logged.push([db, key, value]) } as unknown as ReplicationLog;
  const writes = new ViewWrites(silentLogger, { delayMs: 60_000 });
  const samples = new SampleLog(log, writes);
  samples.hold('m', ['tok', 1], 500_000);
  samples.hold('v', ['acc', 'w'], { n: 1 });
  writes.add();
  assert.deepEqual(logged, [], 'nothing logged before the flush');
  writes.flush();
  assert.deepEqual(logged, [
    ['m', ['tok', 1], 500_000],
    ['v', ['acc', 'w'], { n: 1 }],
  ]);
  writes.add();
  writes.flush();
  assert.equal(logged.length, 2, 'a record is logged once');
  writes.close();
});
