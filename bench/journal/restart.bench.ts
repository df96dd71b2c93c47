/**
 * Restart against history (issue 42): how long the service takes from a SIGTERM to answering again, and what
 * it holds in memory, as its history grows 1x, 3x and 10x with the same open state; beside it, the restart of
 * a copy of the same store without its checkpoints (what every restart cost before: the whole journal
 * replayed and proved), and the disk the history takes. Run alone:
 *
 *   npx tsx --expose-gc bench/journal/restart.bench.ts
 *   HISTORY_ORDERS=20000,60000,200000 REST_ORDERS=2000 npx tsx --expose-gc bench/journal/restart.bench.ts   (a short run)
 *
 * Workload. One service (tools/service-process.ts, as `npm start` runs it, DEMO=0, rate limits off), its
 * history built with tools/load.ts as the issue measured it (POST /orders, batches of 15, 8 markets per run,
 * 20 wallets): first REST_ORDERS orders that rest (mix `resting`: the open state, the same at every size),
 * then `crossing` orders, which all fill, until the service has acknowledged each size of HISTORY_ORDERS
 * (cumulative; default 150,000, 450,000, 1,500,000). The loads run in chunks of CHUNK_ORDERS (each chunk's
 * orders are pre-signed before it). The service keeps its journal (`history.journal.retention: keep`) so
 * that the copy without checkpoints can still replay it whole; the disk the default policy (`archive`)
 * would leave is measured on a copy (below). Checkpoints by the default policy otherwise.
 *
 * Measured at each size:
 *   stop     SIGTERM to the process's exit (an orderly stop writes its checkpoint at the last seq)
 *   ready    the new process's spawn to its first `GET /` = 200, started straight after the stop (before
 *            anything below writes to the disk); RSS (VmRSS, and its anonymous and file-backed parts: the
 *            store's pages it mapped) once ready
 *   full     the same on a copy of the store without its checkpoints (the proof replays the whole journal)
 *   disk     data.mdb as it is, its live pages (an LMDB compacting copy), and on a copy after the default
 *            policy's retention (the journal below the oldest kept checkpoint archived and removed; live pages
 *            and the gzip archive)
 * Excluded: building the history (timed separately and printed), the copies, the compactions.
 *
 * Self-checks (a failure throws): every load's own checks (tools/load.ts verifyLoad: acknowledged orders read
 * back, balances, open orders, conservation); a restart after SIGTERM proves from a checkpoint at the journal's
 * last seq and replays nothing; the copy without checkpoints proves the whole journal and reaches the same
 * state hash; the archive reads back whole. The targets are reported, not thrown: ready flat (largest
 * within 1.3x of the smallest) and at most 5 s at 1.5 million orders.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CheckpointStore } from '../../src/journal/checkpoints/checkpoints.ts';
import { openStore } from '../../src/journal/env.ts';
import { metaKeys } from '../../src/journal/keys.ts';
import { archiveJournal, listArchives, readArchive } from '../../src/journal/retention.ts';
import { runLoad, type Mix } from '../../tools/load.ts';
import { startService, type ServiceProcess } from '../../tools/service-process.ts';

const ADMIN = 'restart-bench';
const sizes = (process.env.HISTORY_ORDERS ?? '150000,450000,1500000').split(',').map(Number);
const REST = Number(process.env.REST_ORDERS ?? 10_000);
const CHUNK = Number(process.env.CHUNK_ORDERS ?? 150_000);

function check(cond: boolean, what: string): void {
  if (!cond) throw new Error(`restart bench self-check failed: ${what}`);
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(0);
const dirBytes = (dir: string): number =>
  existsSync(dir) ? readdirSync(dir).reduce((n, f) => n + (statSync(join(dir, f)).isDirectory() ? dirBytes(join(dir, f)) : statSync(join(dir, f)).size), 0) : 0;

function rss(pid: number): { rss: number; anon: number; file: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
}

/** The `engine recovered` log line of a service's start. */
function recovered(svc: ServiceProcess): { journalSeq: number; checkpoint: number; events: number; openOrders: number } {
  const line = svc.tail().split('\n').find((l) => l.includes('"engine recovered"'));
  check(line !== undefined, `the service logged its recovery:\n${svc.tail()}`);
  return JSON.parse(line!) as { journalSeq: number; checkpoint: number; events: number; openOrders: number };
}

async function start(dataDir: string, configFile: string): Promise<{ svc: ServiceProcess; readyMs: number; mem: ReturnType<typeof rss> }> {
  const t0 = performance.now();
  const svc = await startService({ dataDir, adminToken: ADMIN, env: { RATE_LIMITS: 'off', CONFIG_FILE: configFile, LOG_LEVEL: 'info' }, startTimeoutMs: 600_000 });
  for (;;) {
    const r = await fetch(`${svc.url}/`).catch(() => undefined);
    if (r?.status === 200) {
      await r.arrayBuffer();
      break;
    }
    await new Promise((res) => setTimeout(res, 5));
  }
  const readyMs = performance.now() - t0;
  return { svc, readyMs, mem: rss(svc.pid) };
}

async function stop(svc: ServiceProcess): Promise<number> {
  const t0 = performance.now();
  const code = await svc.stop('SIGTERM', 600_000);
  check(code === 0, `orderly stop exits 0 (got ${code}):\n${svc.tail()}`);
  return performance.now() - t0;
}

async function load(url: string, mix: Mix, orders: number, seed: string): Promise<number> {
  const r = await runLoad({ url, adminToken: ADMIN, wallets: 20, markets: 8, batch: 15, mix, flatOut: true, duration: 3600, maxOrders: orders, connections: 16, seed, verifySample: 200, progress: false, log: () => undefined });
  check(r.check?.ok === true, `the load's own checks: ${r.check?.problems.slice(0, 3).join('; ')}`);
  return r.run.acked;
}

/** data.mdb's live pages: the size of a compacting copy. */
async function liveBytes(dataDir: string): Promise<number> {
  const copy = mkdtempSync(join(tmpdir(), 'pm-restart-compact-'));
  const store = openStore({ dataDir });
  try {
    await store.root.backup(copy, true);
    return statSync(join(copy, 'data.mdb')).size;
  } finally {
    await store.close();
    rmSync(copy, { recursive: true, force: true });
  }
}

/** On a copy: the default policy's retention (archive), then the live pages left and the archive's size. */
async function defaultPolicyDisk(dataDir: string): Promise<{ live: number; archive: number; removed: number }> {
  const copy = mkdtempSync(join(tmpdir(), 'pm-restart-policy-'));
  cpSync(dataDir, copy, { recursive: true });
  try {
    const store = openStore({ dataDir: copy });
    const autos = new CheckpointStore(join(copy, 'checkpoints')).list().filter((e) => e.name === 'auto');
    const line = autos[autos.length - 1]!.seq;
    const archiveDir = join(copy, 'archive');
    const r = archiveJournal(store, { after: 0, to: line, policy: 'archive', dir: archiveDir });
    await store.meta.put(metaKeys.journalPrunedTo, line);
    let p: Promise<unknown> = Promise.resolve();
    for (const seq of r.remove) p = store.journal.remove(seq);
    await p;
    await store.close();
    const back = readArchive(r.file!);
    check(back.events.length === line, `the archive reads back whole (${back.events.length} of ${line} events)`);
    return { live: await liveBytes(copy), archive: listArchives(archiveDir).reduce((n, a) => n + statSync(a.file).size, 0), removed: r.remove.length };
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

interface Row {
  orders: number;
  events: number;
  buildS: number;
  stopMs: number;
  readyMs: number;
  mem: ReturnType<typeof rss>;
  fullMs: number;
  fullMem: ReturnType<typeof rss>;
  disk: { file: number; live: number; policyLive: number; archive: number; checkpoints: number };
}

export default async function run(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-restart-bench-'));
  const configFile = join(dataDir + '-config.json');
  writeFileSync(configFile, JSON.stringify({ history: { journal: { retention: 'keep' } } }));
  const rows: Row[] = [];
  let svc: ServiceProcess | undefined;
  try {
    ({ svc } = await start(dataDir, configFile));
    let buildMs = performance.now();
    let acked = await load(svc.url, 'resting', REST, 'rest');
    buildMs = performance.now() - buildMs;
    const open = acked;
    let chunk = 0;
    for (const size of sizes) {
      // Serving again after the previous size's measures (not measured).
      if (svc === undefined) ({ svc } = await start(dataDir, configFile));
      const tb = performance.now();
      while (acked < size) acked += await load(svc.url, 'crossing', Math.min(CHUNK, size - acked), `cross-${chunk++}`);
      buildMs += performance.now() - tb;
      const buildS = buildMs / 1000;
      const stopMs = await stop(svc);
      svc = undefined;
      const s = openStore({ dataDir });
      const events = s.meta.get(metaKeys.journalSeq) as number;
      await s.close();
      // The restart measured first, straight after the stop as an operator's would be: before the copy
      // below, whose gigabytes of writes and deletes would still be going to disk under it.
      const r = await start(dataDir, configFile);
      const rec = recovered(r.svc);
      check(rec.checkpoint === events && rec.events === 0, `a restart after SIGTERM proves from its shutdown checkpoint (checkpoint ${rec.checkpoint}, journal ${events}, replayed ${rec.events})`);
      check(rec.openOrders >= open * 0.99, `the open state is restored (${rec.openOrders} open, ${open} rested)`);
      await stop(r.svc);
      // The copy without checkpoints: what a restart cost before.
      const bare = `${dataDir}-full`;
      rmSync(bare, { recursive: true, force: true });
      cpSync(dataDir, bare, { recursive: true });
      rmSync(join(bare, 'checkpoints'), { recursive: true, force: true });
      const full = await start(bare, configFile);
      const fullRec = recovered(full.svc);
      check(fullRec.checkpoint === 0 && fullRec.events === events, `the copy without checkpoints replays the whole journal (${fullRec.events} of ${events})`);
      await stop(full.svc);
      const fullHash = new CheckpointStore(join(bare, 'checkpoints')).list()[0];
      const fullState = fullHash && new CheckpointStore(join(bare, 'checkpoints')).header(fullHash).stateHash;
      rmSync(bare, { recursive: true, force: true });
      const cs = new CheckpointStore(join(dataDir, 'checkpoints'));
      const own = cs.header(cs.list()[0]!).stateHash;
      check(fullState === own, `the whole journal's proof reaches the checkpoint's state hash (${fullState} vs ${own})`);

      const file = statSync(join(dataDir, 'data.mdb')).size;
      const live = await liveBytes(dataDir);
      const policy = await defaultPolicyDisk(dataDir);
      rows.push({
        orders: acked,
        events,
        buildS,
        stopMs,
        readyMs: r.readyMs,
        mem: r.mem,
        fullMs: full.readyMs,
        fullMem: full.mem,
        disk: { file, live, policyLive: policy.live, archive: policy.archive, checkpoints: dirBytes(join(dataDir, 'checkpoints')) },
      });
      console.log(
        `${acked.toLocaleString('en-US')} orders (${events.toLocaleString('en-US')} events, built in ${buildS.toFixed(0)} s): stop ${(stopMs / 1000).toFixed(2)} s, ` +
          `ready ${(r.readyMs / 1000).toFixed(2)} s RSS ${mb(r.mem.rss)} MB (anon ${mb(r.mem.anon)}, file ${mb(r.mem.file)}); ` +
          `without checkpoints ready ${(full.readyMs / 1000).toFixed(2)} s RSS ${mb(full.mem.rss)} MB (anon ${mb(full.mem.anon)}, file ${mb(full.mem.file)}); ` +
          `disk ${mb(file)} MB (live ${mb(live)}; default policy: live ${mb(policy.live)} + archive ${mb(policy.archive)}, checkpoints ${mb(rows.at(-1)!.disk.checkpoints)}) ` +
          `load ${loadavg()[0]!.toFixed(1)}`,
      );
    }
  } finally {
    await svc?.stop('SIGTERM', 600_000).catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(configFile, { force: true });
  }
  const ready = rows.map((r) => r.readyMs);
  const flat = Math.max(...ready) / Math.min(...ready);
  const last = rows.at(-1)!;
  console.log('\n| history (orders) | journal events | stop | restart to ready | RSS (anon / file) | without checkpoints | its RSS | data.mdb (live) | default policy: live + archive |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.orders.toLocaleString('en-US')} | ${r.events.toLocaleString('en-US')} | ${(r.stopMs / 1000).toFixed(2)} s | ${(r.readyMs / 1000).toFixed(2)} s | ${mb(r.mem.rss)} MB (${mb(r.mem.anon)} / ${mb(r.mem.file)}) | ` +
        `${(r.fullMs / 1000).toFixed(2)} s | ${mb(r.fullMem.rss)} MB (${mb(r.fullMem.anon)} / ${mb(r.fullMem.file)}) | ${mb(r.disk.file)} MB (${mb(r.disk.live)}) | ${mb(r.disk.policyLive)} + ${mb(r.disk.archive)} MB |`,
    );
  }
  const perM = (bytes: number) => (bytes / (last.orders / 1e6) / 1e6).toFixed(0);
  console.log(
    `\nready flat: largest / smallest ${flat.toFixed(2)} (target <= 1.3: ${flat <= 1.3 ? 'met' : 'NOT met'}); at ${last.orders.toLocaleString('en-US')} orders ${(last.readyMs / 1000).toFixed(2)} s ` +
      `(target <= 5 s at 1.5M: ${last.orders >= 1_500_000 ? (last.readyMs <= 5000 ? 'met' : 'NOT met') : 'not measured at that size'}); ` +
      `disk per million orders with the default policy: ${perM(last.disk.policyLive)} MB live + ${perM(last.disk.archive)} MB archive; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
