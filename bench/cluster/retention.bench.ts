/**
 * Disk and stream after a long run with the default history policy (issue 42: "bounded, and the figure
 * stated"), in one run on this machine: a real nats-server on the per-role users of tools/nats-config.ts, the
 * sequencer in this process (startApp, its checkpointer and snapshot shipper on their own timers), the load
 * generator (tools/load.ts) in a child process trading at a steady open-loop rate for RUN_SECONDS.
 * Run alone: `npx tsx --expose-gc bench/cluster/retention.bench.ts`; a short run with the policy's clocks
 * scaled down: `RUN_SECONDS=150 RATE=300 CHECKPOINT_SECONDS=15 SNAPSHOT_SECONDS=30 npx tsx --expose-gc bench/cluster/retention.bench.ts`.
 * Skipped, with a message naming nats-server, when it is not on the PATH.
 *
 * The policy is config/default.json's `history` (checkpoints every 200,000 events or 600 s, 2 kept, the journal
 * archived below them; snapshots every 3600 s, 2 kept, the stream and the replication log purged below the
 * oldest), with only its two clocks settable (CHECKPOINT_SECONDS, SNAPSHOT_SECONDS; defaults: the policy's), so
 * that a run of minutes shows what a run of hours would. Mix: tools/load.ts `crossing` single orders (POST
 * /order) at RATE/s, 8 markets, 20 wallets.
 *
 * Every SAMPLE_SECONDS it records: orders acknowledged so far (from the journal's growth), journal seq,
 * data.mdb's size, the archive's and the checkpoints' bytes, the replication log's records, the stream's
 * records, bytes and first record, the snapshot bucket's bytes. Reported: the samples, then what stays bounded
 * (the stream, the replication log, the checkpoints) with its figure at the end, and what grows by design (the
 * read models the API serves old history from, the archive, and so the snapshots that copy the store) per
 * million orders.
 *
 * Self-checks (a failure throws): the load's own checks, every order acknowledged; at least keep + 1 snapshots
 * shipped with no failure (so the stream was purged at least once); at the end the stream starts right after
 * the oldest kept snapshot and holds nothing older, the replication log holds nothing the stream dropped, the
 * bucket holds `keep` snapshots, retention archived the journal (journal:prunedTo > 0) and the archive reads
 * back (tools/journal-archive.ts's verification); no node's NATS user was refused anything.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startApp, type App } from '../../src/node/app.ts';
import { loadMasterKey } from '../../src/edge/auth/credentials.ts';
import { openNatsLink } from '../../src/replication/nats-link.ts';
import { ClusterKeys } from '../../src/replication/seal.ts';
import { SnapshotBucket } from '../../src/replication/snapshot-store.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { createLogger } from '../../src/runtime/log.ts';
import { verifyArchives } from '../../tools/journal-archive.ts';
import type { LoadOptions } from '../../tools/load.ts';
import { natsServerAvailable, startNatsServer } from '../../tools/nats-server.ts';
import { runLoadChild } from '../lib/load-child.ts';

/** config/default.json's policy. */
const defaults = testConfig().history;
const RUN_SECONDS = Number(process.env.RUN_SECONDS ?? 3 * 3600);
const RATE = Number(process.env.RATE ?? 300);
const CHECKPOINT_SECONDS = Number(process.env.CHECKPOINT_SECONDS ?? defaults.checkpoints.everySeconds);
const SNAPSHOT_SECONDS = Number(process.env.SNAPSHOT_SECONDS ?? defaults.snapshots.everySeconds);
const SAMPLE_SECONDS = Number(process.env.SAMPLE_SECONDS ?? Math.max(5, Math.round(SNAPSHOT_SECONDS / 3)));
const ADMIN = 'retention-bench';
const MASTER_KEY = 'rb'.repeat(32);


function check(cond: boolean, what: string): void {
  if (!cond) throw new Error(`retention bench self-check failed: ${what}`);
}

const mb = (b: number) => (b / 1e6).toFixed(1);
const dirBytes = (dir: string): number => {
  try {
    return readdirSync(dir).reduce((n, f) => n + (statSync(join(dir, f)).isDirectory() ? dirBytes(join(dir, f)) : statSync(join(dir, f)).size), 0);
  } catch {
    return 0;
  }
};

interface Sample {
  t: number;
  journalSeq: number;
  dataMdb: number;
  archive: number;
  checkpoints: number;
  logRecords: number;
  streamRecords: number;
  streamBytes: number;
  streamFirst: number;
  streamLast: number;
  bucket: number;
  shipped: number;
}

export default async function run(): Promise<void> {
  if (!natsServerAvailable()) {
    console.log('retention bench skipped: nats-server not on PATH');
    return;
  }
  const keep = defaults.snapshots.keep;
  const nats = await startNatsServer({ secure: true });
  const seqDir = mkdtempSync(join(tmpdir(), 'pm-retention-seq-'));
  const seq: App = await startApp(
    testConfig({
      dataDir: seqDir,
      http: { port: 0 },
      adminToken: ADMIN,
      demo: 'off',
      rateLimits: { enabled: false },
      auth: { masterKey: MASTER_KEY, signatureThreads: 1 },
      history: { ...defaults, checkpoints: { ...defaults.checkpoints, everySeconds: CHECKPOINT_SECONDS }, snapshots: { ...defaults.snapshots, everySeconds: SNAPSHOT_SECONDS } },
      cluster: { role: 'sequencer', natsUrl: nats.url, ...nats.credentials('sequencer'), sequencerUrl: '' },
    }),
    { log: createLogger('warn') },
  );
  const url = `http://127.0.0.1:${seq.port}`;
  const admin = nats.users!.admin;
  const link = (await openNatsLink({ natsUrl: nats.url, user: admin.user, password: admin.password }, createLogger('silent'), () => false, 'bench'))!;
  const keys = ClusterKeys.fromMaster(loadMasterKey({ masterKey: MASTER_KEY }, seqDir));
  const samples: Sample[] = [];
  let bucket: SnapshotBucket | undefined;
  const t0 = performance.now();
  const sample = async (): Promise<Sample> => {
    const stream = (await link.jsm.streams.info('PM_JOURNAL')).state;
    bucket ??= await SnapshotBucket.open(link, 'PM_JOURNAL', keys);
    const s: Sample = {
      t: (performance.now() - t0) / 1000,
      journalSeq: seq.ctx.engine.committedSeq,
      dataMdb: statSync(join(seqDir, 'data.mdb')).size,
      archive: dirBytes(join(seqDir, 'archive')),
      checkpoints: dirBytes(join(seqDir, 'checkpoints')),
      logRecords: seq.ctx.store.replication.getKeysCount(),
      streamRecords: stream.messages,
      streamBytes: stream.bytes,
      streamFirst: stream.first_seq,
      streamLast: stream.last_seq,
      bucket: bucket === undefined ? 0 : await bucket.bytes(),
      shipped: seq.replication.shipper!.stats().shipped,
    };
    samples.push(s);
    console.log(
      `t ${s.t.toFixed(0)} s: journal ${s.journalSeq} events; data.mdb ${mb(s.dataMdb)} MB, archive ${mb(s.archive)} MB, checkpoints ${mb(s.checkpoints)} MB; ` +
        `replication log ${s.logRecords} records; stream ${s.streamRecords} records ${mb(s.streamBytes)} MB (${s.streamFirst}..${s.streamLast}); bucket ${mb(s.bucket)} MB; ` +
        `snapshots shipped ${s.shipped}; load ${loadavg()[0]!.toFixed(1)}`,
    );
    return s;
  };
  try {
    await sample();
    let running = true;
    const sampler = (async () => {
      while (running) {
        await new Promise((r) => setTimeout(r, SAMPLE_SECONDS * 1000));
        if (running) await sample();
      }
    })();
    const r = await runLoadChild({
      url,
      adminToken: ADMIN,
      wallets: 20,
      markets: 8,
      connections: 32,
      mix: 'crossing',
      batch: 1,
      rate: RATE,
      duration: RUN_SECONDS,
      verifySample: 200,
      seed: 'retention',
    } as LoadOptions);
    running = false;
    await sampler;
    check(r.checkOk && r.errors === 0, `the load's checks, every order acknowledged: ${r.problems.join('; ')} (${r.errors} errors)`);
    // Whatever shipment is on its way ends before the last look.
    const shipper = seq.replication.shipper!;
    const st = shipper.stats();
    check(st.failures === 0, `${st.failures} snapshots failed to ship`);
    check(st.shipped >= keep + 1, `${st.shipped} snapshots shipped: run longer than (keep + 1) x SNAPSHOT_SECONDS = ${(keep + 1) * SNAPSHOT_SECONDS} s`);
    await seq.checkpointer!.retain();
    const end = await sample();
    const kept = await bucket!.list();
    check(kept.length === keep, `the bucket keeps ${keep} snapshots (holds ${kept.length})`);
    const oldest = kept[kept.length - 1]!;
    check(end.streamFirst === oldest.rseq + 1, `the stream starts right after the oldest kept snapshot (first ${end.streamFirst}, snapshot at ${oldest.rseq})`);
    const logFirst = ([...seq.ctx.store.replication.getKeys({ limit: 1 })] as number[])[0] ?? end.streamLast + 1;
    check(logFirst >= end.streamFirst, `the replication log holds nothing the stream dropped (first ${logFirst}, stream ${end.streamFirst})`);
    const prunedTo = seq.checkpointer!.stats().prunedTo;
    check(prunedTo > 0, 'retention archived the journal');
    const archive = verifyArchives(join(seqDir, 'archive'), join(seqDir, 'checkpoints'));
    check(archive.problems.length === 0 && archive.to === prunedTo, `the archive reads back to ${prunedTo} (to ${archive.to}): ${archive.problems.join('; ')}`);
    const violations = nats.log().split('\n').filter((l) => /Violation[^\n]*User "(sequencer|gateway|replica)"/.test(l));
    check(violations.length === 0, `no node's NATS user was refused anything:\n${violations.join('\n')}`);

    const orders = r.acked;
    const first = samples[0]!;
    const perMillion = (bytes: number) => (bytes / orders) * 1e6;
    const recordBytes = end.streamBytes / Math.max(1, end.streamRecords);
    const recordsPerS = (end.streamLast - first.streamLast) / (end.t - first.t);
    console.log(`\n${orders.toLocaleString('en-US')} orders at ${RATE}/s over ${r.elapsedS.toFixed(0)} s; checkpoints every ${CHECKPOINT_SECONDS} s, snapshots every ${SNAPSHOT_SECONDS} s, ${keep} kept; ${st.shipped} shipped`);
    console.log('bounded (at the end):');
    console.log(`  stream: ${end.streamRecords.toLocaleString('en-US')} records, ${mb(end.streamBytes)} MB (records ${end.streamFirst}..${end.streamLast} of ${end.streamLast}: those since the oldest kept snapshot)`);
    console.log(`  replication log: ${end.logRecords.toLocaleString('en-US')} records; checkpoints ${(end.checkpoints / 1000).toFixed(0)} KB (${defaults.checkpoints.keep} kept: the open state, not the history)`);
    console.log(
      `  the stream under the default policy holds ${keep - 1}-${keep} x ${defaults.snapshots.everySeconds} s of records: at this run's ${recordsPerS.toFixed(0)} records/s of ${(recordBytes / 1000).toFixed(1)} KB, ` +
        `${mb(recordBytes * recordsPerS * keep * defaults.snapshots.everySeconds)} MB at most`,
    );
    console.log('grows by design (what the API serves old history from, and the audit trail):');
    console.log(`  data.mdb ${mb(end.dataMdb)} MB (${mb(perMillion(end.dataMdb - first.dataMdb))} MB per million orders); archive ${mb(end.archive)} MB (${mb(perMillion(end.archive))} MB per million orders)`);
    console.log(`  snapshot bucket ${mb(end.bucket)} MB: ${keep} snapshots, each a compacting copy of the store, so it follows data.mdb's live pages`);
    console.log(`load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  } finally {
    await seq.stop().catch(() => undefined);
    await link.close();
    await nats.stop();
    rmSync(seqDir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
