/**
 * The standby sequencer (cluster.failover; docs/decisions/scale-out.md, "A standby sequencer"), in one run on this
 * machine: a real nats-server (tools/nats-server.ts) and every node a child process run as `npm start` runs it
 * (tools/service-process.ts: ROLE, FAILOVER, NATS_URL, RATE_LIMITS=off, DEMO=0, durable commits; one
 * CONFIG_FILE with the shared master key and the lease's times, one signature thread per node).
 * Run alone: `npx tsx --expose-gc bench/cluster/failover.bench.ts`; or `npm run bench -- failover`.
 * Skipped, with a message naming nats-server, when nats-server is not on the PATH (failing under CI).
 *
 *   1. What acknowledging after the stream's confirmation costs: two sequencers side by side on streams of
 *      their own, one without failover (acknowledged at its LMDB commit) and one with (acknowledged once the
 *      stream confirmed the batch), loaded in turn (FO_BENCH_ROUNDS rounds, default 2, interleaved) with
 *      FO_BENCH_RATE single orders a second (default 1,000) open loop for FO_BENCH_SECONDS (6): client
 *      p50/p99 and the sequencer's CPU per order (/proc).
 *   2. Takeover time over FO_BENCH_KILLS kills (default 10): a sequencer and a standby under signed load
 *      through a gateway (40 orders/s open loop, one connection); the sequencer is SIGKILLed; measured from
 *      the kill to the standby answering a write as a sequencer (a POST /order without credentials answered
 *      401 instead of 421) and to the next order the gateway got acknowledged; the killed node is restarted
 *      (it follows as the standby) before the next kill. Lease times: leaseMs 3,000, renewMs 1,000, pollMs
 *      500 (the defaults).
 *
 * Self-checks (a failure throws): every order of phase 1 acknowledged and the load tool's checks of each
 * window (verifyLoad); in phase 2 every order the gateway acknowledged is on the last sequencer, once, and
 * nothing but 503s and dropped connections was answered meanwhile.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { driveLoad, prepareLoad, verifyLoad } from '../../tools/load.ts';
import { freePort, natsServerAvailable, startNatsServer } from '../../tools/nats-server.ts';
import { cpuSeconds, startService, type ServiceProcess } from '../../tools/service-process.ts';
import { TestClient, units } from '../../test/fixtures/trading-client.ts';

const RATE = Number(process.env.FO_BENCH_RATE ?? 1000);
const SECONDS = Number(process.env.FO_BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.FO_BENCH_ROUNDS ?? 2);
const KILLS = Number(process.env.FO_BENCH_KILLS ?? 10);
const ADMIN = 'failover-bench';
const MASTER_KEY = 'fb'.repeat(32);
/** A wallet of the demo's derivation scheme is not needed: any key signs; this one is the bench's own. */
const WALLET_KEY = `0x${'4b'.repeat(32)}` as const;

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

async function writeStatus(port: number): Promise<number> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/order`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(1000) });
    await r.arrayBuffer();
    return r.status;
  } catch {
    return 0;
  }
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`failover bench: timed out waiting for ${what}`);
    await sleep(20);
  }
}

export default async function run(): Promise<void> {
  if (!natsServerAvailable()) {
    if (process.env.CI !== undefined) throw new Error("failover bench: nats-server not on PATH (Debian's nats-server package)");
    console.log("failover bench: skipped: nats-server not on PATH (Debian's nats-server package)");
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'pm-failover-bench-'));
  const configOf = (name: string, cluster: Record<string, unknown>) => {
    const f = join(dir, `${name}.json`);
    writeFileSync(f, JSON.stringify({ auth: { masterKey: MASTER_KEY, signatureThreads: 1 }, cluster }));
    return f;
  };
  const configFile = configOf('config', {});
  const nats = await startNatsServer({ dir: join(dir, 'nats') });
  const procs: ServiceProcess[] = [];
  const node = async (name: string, env: Record<string, string>) => {
    // Two streams side by side (PM_PLAIN, PM_WAITS) and tools/nats-config.ts's users are per stream: this bench's
    // nats-server has no users, said explicitly (NATS_INSECURE); every message is authenticated all the same.
    const p = await startService({ dataDir: join(dir, name), adminToken: ADMIN, env: { NATS_URL: nats.url, NATS_INSECURE: '1', CONFIG_FILE: configFile, RATE_LIMITS: 'off', ...env }, startTimeoutMs: 120_000 });
    procs.push(p);
    return p;
  };
  try {
    // ---- 1. acknowledged at the commit vs once the stream confirmed it
    // Streams of their own: each sequencer publishes its own journal.
    const [plain, waits] = await Promise.all([
      node('plain', { ROLE: 'sequencer', FAILOVER: '0', CONFIG_FILE: configOf('plain', { stream: 'PM_PLAIN' }) }),
      node('waits', { ROLE: 'sequencer', FAILOVER: '1', CONFIG_FILE: configOf('waits', { stream: 'PM_WAITS' }) }),
    ]);
    console.log(`failover bench: (1) ${RATE} orders/s for ${SECONDS} s, ${ROUNDS} rounds interleaved; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
    const rows: Array<{ kind: string; p50: number; p99: number; cpu: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const [kind, svc] of round % 2 === 0 ? ([['at commit', plain], ['after stream', waits]] as const) : ([['after stream', waits], ['at commit', plain]] as const)) {
        const s = await prepareLoad({ url: svc.url, adminToken: ADMIN, wallets: 20, markets: 4, mix: 'mixed', rate: RATE, duration: SECONDS, connections: 32, progress: false, verifySample: 300, log: () => undefined });
        const c0 = cpuSeconds(svc.pid) ?? NaN;
        const r = await driveLoad(s);
        const cpu = (((cpuSeconds(svc.pid) ?? NaN) - c0) / r.acked) * 1e6;
        if (r.errors > 0 || r.acked !== r.sent) throw new Error(`failover bench self-check: ${kind}: ${r.acked} of ${r.sent} acknowledged: ${JSON.stringify(r.errorClasses)}`);
        const v = await verifyLoad(s, r);
        if (!v.ok) throw new Error(`failover bench self-check: ${kind}: ${v.problems.join('\n')}`);
        rows.push({ kind, p50: r.latencyMs.p50, p99: r.latencyMs.p99, cpu });
        console.log(`  ${kind.padEnd(12)} p50/p99 ${fmt(r.latencyMs.p50, 2)}/${fmt(r.latencyMs.p99, 2)} ms, sequencer CPU ${fmt(cpu)} µs/order; load ${loadavg()[0]!.toFixed(1)}`);
      }
    }
    const mean = (kind: string, f: (r: (typeof rows)[number]) => number) => rows.filter((r) => r.kind === kind).reduce((n, r) => n + f(r), 0) / ROUNDS;
    console.log(
      `  means: p50 ${fmt(mean('at commit', (r) => r.p50), 2)} -> ${fmt(mean('after stream', (r) => r.p50), 2)} ms, p99 ${fmt(mean('at commit', (r) => r.p99), 2)} -> ${fmt(mean('after stream', (r) => r.p99), 2)} ms, ` +
        `CPU ${fmt(mean('at commit', (r) => r.cpu))} -> ${fmt(mean('after stream', (r) => r.cpu))} µs/order`,
    );
    for (const p of procs.splice(0)) await p.stop('SIGTERM');

    // ---- 2. takeovers
    const ports = { a: await freePort(), b: await freePort() };
    const dirs = { a: join(dir, 'fo-a'), b: join(dir, 'fo-b') };
    const start = (n: 'a' | 'b', role: string) =>
      startService({
        dataDir: dirs[n],
        adminToken: ADMIN,
        env: { ROLE: role, FAILOVER: '1', PUBLIC_URL: `http://127.0.0.1:${ports[n]}`, PORT: String(ports[n]), NATS_URL: nats.url, NATS_INSECURE: '1', CONFIG_FILE: configFile, RATE_LIMITS: 'off' },
        startTimeoutMs: 120_000,
      });
    const running: Record<'a' | 'b', ServiceProcess | undefined> = { a: await start('a', 'sequencer'), b: undefined };
    running.b = await start('b', 'standby');
    const gw = await node('gw', { ROLE: 'gateway', FAILOVER: '1' });
    const admin = async (path: string, body: unknown) => {
      const r = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (r.status !== 200) throw new Error(`failover bench: ${path}: ${r.status} ${await r.text()}`);
    };
    const cid = `0x${'8c'.repeat(32)}`;
    await admin('/admin/events', [{ title: 'Takeovers', slug: 'takeovers', endDate: '2027-06-30T00:00:00Z', markets: [{ question: 'Timed?', conditionId: cid, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] }]);
    const client = new TestClient(gw.url, WALLET_KEY, await TestClient.info(gw.url));
    await admin(`/admin/wallets/${client.address}/deposit`, { amount: '1000000' });
    await client.createKey(1);
    let token = '';
    await until('the gateway holds the market and key', async () => {
      const m = (await (await fetch(`${gw.url}/markets/${cid}`)).json()) as { tokens?: Array<{ token_id: string }> };
      token = m.tokens?.[0]?.token_id ?? '';
      return token !== '' && (await client.call('GET', '/data/orders')).status === 200;
    });
    console.log(`\nfailover bench: (2) ${KILLS} SIGKILLs of the sequencer under 40 orders/s through a gateway (lease 3,000 ms, renew 1,000, poll 500); load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
    const acked = new Map<string, number>();
    const other = new Map<number, number>();
    let lastAck = 0;
    let sending = true;
    const sender = (async () => {
      for (let i = 0; sending; i++) {
        const due = performance.now() + 25;
        let r: { status: number; body: { orderID?: string } };
        try {
          r = await client.place({ tokenId: token, side: 'BUY', makerAmount: units(0.1 + (i % 40) * 0.01), takerAmount: units(1) });
        } catch {
          r = { status: 0, body: {} };
        }
        if (r.status === 200 && r.body.orderID !== undefined) {
          acked.set(r.body.orderID, (acked.get(r.body.orderID) ?? 0) + 1);
          lastAck = Date.now();
        } else other.set(r.status, (other.get(r.status) ?? 0) + 1);
        await sleep(Math.max(0, due - performance.now()));
      }
    })();
    const toWrites: number[] = [];
    const toAcks: number[] = [];
    let [seq, standby] = ['a', 'b'] as ['a' | 'b', 'a' | 'b'];
    for (let k = 0; k < KILLS; k++) {
      await until('orders flowing', () => Date.now() - lastAck < 200);
      await running[seq]!.stop('SIGKILL');
      const t0 = Date.now();
      await until('the standby takes writes', async () => (await writeStatus(ports[standby])) === 401);
      toWrites.push(Date.now() - t0);
      await until('an order acknowledged after the kill', () => lastAck > t0);
      toAcks.push(lastAck - t0);
      running[seq] = await start(seq, 'sequencer');
      await until('the killed node follows as the standby', async () => (await writeStatus(ports[seq])) === 421);
      console.log(`  kill ${k + 1}: taking writes after ${fmt(toWrites.at(-1)!)} ms, next order acknowledged after ${fmt(toAcks.at(-1)!)} ms`);
      [seq, standby] = [standby, seq];
    }
    sending = false;
    await sender;
    for (const s of other.keys()) if (s !== 503 && s !== 0) throw new Error(`failover bench self-check: answered ${s} during the takeovers: ${JSON.stringify([...other])}`);
    await until('the gateway caught up', async () => {
      const h = async (port: number) => Number((await fetch(`http://127.0.0.1:${port}/time`)).headers.get('x-journal-seq'));
      return (await h(gw.port)) >= (await h(ports[seq]));
    });
    for (const [id, n] of acked) {
      if (n !== 1) throw new Error(`failover bench self-check: ${id} acknowledged ${n} times`);
      if ((await client.call('GET', `/data/order/${id}`)).status !== 200) throw new Error(`failover bench self-check: acknowledged order ${id} is not on the sequencer`);
    }
    const line = (xs: number[]) => `min ${fmt(Math.min(...xs))}, median ${fmt(quantile(xs, 0.5))}, max ${fmt(Math.max(...xs))} ms`;
    console.log(`  kill -> taking writes: ${line(toWrites)}; kill -> next acknowledged order: ${line(toAcks)}; ${fmt(acked.size)} orders acknowledged, all on the last sequencer once; meanwhile ${JSON.stringify([...other])}`);
    for (const p of [running.a, running.b]) await p?.stop('SIGKILL');
  } finally {
    for (const p of procs) await p.stop('SIGKILL').catch(() => undefined);
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
