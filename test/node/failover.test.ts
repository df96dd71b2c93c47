/**
 * The sequencer's lease and a standby's takeover (src/node/failover.ts), in process, over a real nats-server:
 * the sequencer takes the lease and acknowledges only what the stream confirmed; a standby follows with the
 * replication log; when the sequencer stops renewing, the standby takes over within the lease time, its
 * first record proves it applied the whole stream, and orders through a gateway go on with nothing
 * acknowledged lost and none twice; a replica's 421 names the lease holder. Killed processes under load:
 * test/node/cluster.test.ts. Skipped where nats-server is missing (failing under CI).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { test } from 'node:test';
import { DEMO_WALLETS } from '../../src/demo/catalog.ts';
import { depositEvent } from '../../src/domain/events.ts';
import { prepareStandbyStore, startFailoverNode, type FailoverNode } from '../../src/node/failover.ts';
import { openStore } from '../../src/journal/env.ts';
import { metaKeys } from '../../src/journal/keys.ts';
import { ReplicationLog, readReplicatedBatch } from '../../src/journal/replication-log.ts';
import { JournalWriter } from '../../src/journal/writer.ts';
import { ensureStream, openNatsLink, streamLastRseq } from '../../src/replication/nats-link.ts';
import { encodeBatch } from '../../src/replication/wire.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { createLogger } from '../../src/runtime/log.ts';
import { freePort, startNatsServer, type NatsServer } from '../../tools/nats-server.ts';
import { startService, type ServiceProcess } from '../../tools/service-process.ts';
import { CLUSTER_KEYS, MASTER_KEY, journalSeqOf, natsSkip, until } from '../fixtures/cluster.ts';
import { TestClient, units } from '../fixtures/trading-client.ts';

const skip = natsSkip();
const log = createLogger('silent');
const ADMIN = 'failover-admin';
const LEASE = { leaseMs: 1500, renewMs: 300, pollMs: 100 };

function config(role: string, nats: NatsServer, name: string) {
  return testConfig({
    dataDir: mkdtempSync(join(tmpdir(), `pm-fo-${name}-`)),
    http: { port: 0 },
    adminToken: ADMIN,
    demo: false,
    rateLimits: { enabled: false },
    auth: { masterKey: MASTER_KEY, signatureThreads: 1 },
    cluster: { role, natsUrl: nats.url, ...nats.credentials(role), failover: { enabled: true, nodeUrl: `http://${name}.test`, ...LEASE } },
  });
}

test('a standby takes over when the sequencer stops renewing: nothing acknowledged lost, none twice, trading resumes through the gateway', { skip }, async () => {
  const nats = await startNatsServer({ secure: true });
  const nodes: FailoverNode[] = [];
  try {
    const a = await startFailoverNode(config('sequencer', nats, 'a'), { log });
    nodes.push(a);
    assert.equal(a.role, 'sequencer');
    assert.equal(a.term, 1);
    const b = await startFailoverNode(config('standby', nats, 'b'), { log });
    nodes.push(b);
    assert.equal(b.role, 'standby');
    const gwNode = await startFailoverNode(config('gateway', nats, 'gw'), { log });
    nodes.push(gwNode);
    const gw = gwNode.app;
    const rep = await startFailoverNode(config('replica', nats, 'r'), { log });
    nodes.push(rep);
    const gwBase = `http://127.0.0.1:${gw.port}`;
    const base = (n: FailoverNode) => `http://127.0.0.1:${n.app.port}`;

    // A market and a funded wallet, through the gateway (admin routes are forwarded whole).
    const admin = async (path: string, body: unknown) => {
      const r = await fetch(`${gwBase}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(r.status, 200, `${path}: ${await r.clone().text()}`);
    };
    const cid = `0x${'5f'.repeat(32)}`;
    await admin('/admin/events', [{ title: 'Failover', slug: 'failover', endDate: '2027-06-30T00:00:00Z', markets: [{ question: 'Survives?', conditionId: cid, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] }]);
    const info = await TestClient.info(base(a));
    const alice = new TestClient(gwBase, DEMO_WALLETS[1].privateKey, info);
    await admin(`/admin/wallets/${alice.address}/deposit`, { amount: '1000' });
    await alice.createKey(1);
    const token = a.app.ctx.catalog.read.marketByCondition(cid)!.clobTokenIds[0]!;
    await until('the gateway holds the key and market', async () => (await journalSeqOf(gwBase)) >= (await journalSeqOf(base(a))));

    // A replica's 421 names the lease holder.
    const refused = await fetch(`${base(rep)}/order`, { method: 'POST', body: '{}' });
    assert.equal(refused.status, 421);
    assert.match(await refused.text(), /http:\/\/a\.test/);

    // Orders until the takeover; every acknowledged one is remembered.
    const acked = new Map<string, number>();
    let sending = true;
    const errors: number[] = [];
    const sender = (async () => {
      for (let i = 0; sending; i++) {
        const r = await alice.place({ tokenId: token, side: 'BUY', makerAmount: units(0.1 + (i % 40) * 0.01), takerAmount: units(1) });
        if (r.status === 200) acked.set(r.body.orderID, (acked.get(r.body.orderID) ?? 0) + 1);
        else {
          errors.push(r.status);
          await new Promise((res) => setTimeout(res, 50));
        }
      }
    })();
    await until('orders acknowledged before the takeover', () => acked.size >= 20);
    // The sequencer stops (its lease is left to run out, as when a machine dies).
    const changed = b.changed();
    const stoppedAt = Date.now();
    await a.stop();
    nodes.splice(nodes.indexOf(a), 1);
    await changed;
    const took = Date.now() - stoppedAt;
    assert.equal(b.role, 'sequencer');
    assert.equal(b.term, 2);
    assert.ok(took < LEASE.leaseMs + 3000, `taken over in ${took} ms`);
    const before = acked.size;
    await until('orders acknowledged after the takeover', () => acked.size >= before + 20, 15_000);
    sending = false;
    await sender;
    for (const s of errors) assert.ok(s === 503 || s === 500, `only refusals that invite a retry during the takeover, got ${s}`);
    // Every acknowledged order is on the new sequencer, once.
    for (const [id, n] of acked) {
      assert.equal(n, 1, `${id} acknowledged once`);
      assert.ok(b.app.ctx.engine.getOrder(id) !== undefined, `acknowledged order ${id} is on the new sequencer`);
    }
    // The replica follows the new term; its 421 now names the new holder.
    await until('the replica names the new holder', async () => /http:\/\/b\.test/.test(await (await fetch(`${base(rep)}/order`, { method: 'POST', body: '{}' })).text()));
    await until('the replica caught up', async () => (await journalSeqOf(base(rep))) >= (await journalSeqOf(base(b))));
    assert.equal(rep.app.ctx.engine.stateHash(), b.app.ctx.engine.stateHash());
  } finally {
    for (const n of nodes.reverse()) await n.stop().catch(() => undefined);
    await nats.stop();
  }
});

// ---- killed and paused processes (main.ts runs the node: npm start's own code path) -------------------

interface Proc {
  name: string;
  port: number;
  dataDir: string;
  svc: ServiceProcess | undefined;
}

/** A node as a child process on a fixed port (a role change keeps it), under the lease with short times. */
async function cluster(nats: NatsServer) {
  const dir = mkdtempSync(join(tmpdir(), 'pm-fo-proc-'));
  const configFile = join(dir, 'config.json');
  writeFileSync(configFile, JSON.stringify({ auth: { masterKey: MASTER_KEY, signatureThreads: 1 }, cluster: { failover: { leaseMs: 1200, renewMs: 250, pollMs: 100 } } }));
  const start = async (p: Proc, role: string) => {
    p.svc = await startService({
      dataDir: p.dataDir,
      adminToken: ADMIN,
      env: { ROLE: role, NATS_URL: nats.url, ...nats.env(role), FAILOVER: '1', PUBLIC_URL: `http://127.0.0.1:${p.port}`, PORT: String(p.port), CONFIG_FILE: configFile, RATE_LIMITS: 'off' },
      startTimeoutMs: 60_000,
    });
    return p;
  };
  const proc = async (name: string): Promise<Proc> => ({ name, port: await freePort(), dataDir: join(dir, name), svc: undefined });
  return { dir, start, proc };
}

/** What a node answers a write now: 401 (a sequencer: no credentials), 421 (a standby or replica), 503 (deposed), or 0 (down). */
async function writeStatus(p: Proc): Promise<number> {
  try {
    const r = await fetch(`http://127.0.0.1:${p.port}/order`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(1000) });
    await r.arrayBuffer();
    return r.status;
  } catch {
    return 0;
  }
}

/** Signed orders through the gateways, two at a time, until stopped; what was acknowledged, and what else was answered. */
function orderLoad(clients: TestClient[], token: string) {
  const acked = new Map<string, number>();
  const other = new Map<number, number>();
  let running = true;
  const loops = clients.map(async (c, k) => {
    for (let i = 0; running; i++) {
      let r: { status: number; body: { orderID?: string } };
      try {
        r = await c.place({ tokenId: token, side: 'BUY', makerAmount: units(0.1 + ((i * 2 + k) % 40) * 0.01), takerAmount: units(1) });
      } catch {
        r = { status: 0, body: {} };
      }
      if (r.status === 200 && r.body.orderID !== undefined) acked.set(r.body.orderID, (acked.get(r.body.orderID) ?? 0) + 1);
      else {
        other.set(r.status, (other.get(r.status) ?? 0) + 1);
        await new Promise((res) => setTimeout(res, 100));
      }
    }
  });
  return {
    acked,
    other,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Every acknowledged order on the sequencer behind `gateway`, once (read through the gateway once it caught up). */
async function allOnSequencer(client: TestClient, acked: Map<string, number>, seqBase: string): Promise<void> {
  await until('the gateway caught up', async () => (await journalSeqOf(client.base)) >= (await journalSeqOf(seqBase)), 20_000);
  for (const [id, n] of acked) {
    assert.equal(n, 1, `${id} acknowledged once`);
    const r = await client.call('GET', `/data/order/${id}`);
    assert.equal(r.status, 200, `acknowledged order ${id} is on the sequencer: ${JSON.stringify(r.body)}`);
  }
}

// Four kills in CI, each node killed twice as the sequencer (each ~13 s on a 2-core machine: a lease, a
// takeover, a restart); FAILOVER_KILLS=20 for the
// longer soak the decision log's figures came from.
const KILLS = Math.max(2, Number(process.env.FAILOVER_KILLS ?? 4));

test('under signed load through two gateways, the sequencer SIGKILLed again and again (four times; FAILOVER_KILLS for more): each time the standby takes over within the lease time, the killed node comes back as the standby, and every acknowledged order is on the sequencer, none twice', { skip, timeout: 600_000 }, async (t) => {
  const nats = await startNatsServer({ secure: true });
  const c = await cluster(nats);
  const procs: Proc[] = [];
  try {
    const [a, b, g1, g2] = await Promise.all(['a', 'b', 'g1', 'g2'].map((n) => c.proc(n)));
    procs.push(a, b, g1, g2);
    await c.start(a, 'sequencer');
    await Promise.all([c.start(b, 'standby'), c.start(g1, 'gateway'), c.start(g2, 'gateway')]);
    const gBase = (g: Proc) => `http://127.0.0.1:${g.port}`;
    const admin = async (path: string, body: unknown) => {
      const r = await fetch(`${gBase(g1)}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(r.status, 200, `${path}: ${await r.clone().text()}`);
    };
    const cid = `0x${'6e'.repeat(32)}`;
    await admin('/admin/events', [{ title: 'Kills', slug: 'kills', endDate: '2027-06-30T00:00:00Z', markets: [{ question: 'Twenty?', conditionId: cid, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] }]);
    const info = await TestClient.info(gBase(g1));
    const clients = [g1, g2].map((g) => new TestClient(gBase(g), DEMO_WALLETS[2].privateKey, info));
    await admin(`/admin/wallets/${clients[0]!.address}/deposit`, { amount: '100000' });
    const creds = await clients[0]!.createKey(1);
    clients[1]!.creds = creds;
    await until('the gateways hold the market and the key', async () => {
      const m = (await (await fetch(`${gBase(g2)}/markets/${cid}`)).json()) as { tokens?: Array<{ token_id: string }> };
      return m.tokens !== undefined && (await clients[1]!.call('GET', '/data/orders')).status === 200;
    });
    const token = ((await (await fetch(`${gBase(g1)}/markets/${cid}`)).json()) as { tokens: Array<{ token_id: string }> }).tokens[0]!.token_id;

    const load = orderLoad(clients, token);
    await until('orders acknowledged', () => load.acked.size >= 10);
    let [seq, standby] = [a, b];
    const takeovers: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      const before = load.acked.size;
      await seq.svc!.stop('SIGKILL');
      const t0 = Date.now();
      await until(`takeover ${k + 1}: the standby takes orders`, async () => (await writeStatus(standby)) === 401, 30_000);
      takeovers.push(Date.now() - t0);
      await until(`takeover ${k + 1}: orders acknowledged again`, () => load.acked.size > before + 2, 30_000);
      // The killed node comes back; the lease is held, so it follows as the standby.
      await c.start(seq, 'sequencer');
      await until(`node ${seq.name} follows as a standby`, async () => (await writeStatus(seq)) === 421, 30_000);
      [seq, standby] = [standby, seq];
    }
    await load.stop();
    const sorted = [...takeovers].sort((x, y) => x - y);
    t.diagnostic(`takeovers (kill to the new sequencer taking orders, lease 1,200 ms): min ${sorted[0]} ms, median ${sorted[sorted.length >> 1]} ms, max ${sorted[sorted.length - 1]} ms; ${load.acked.size} orders acknowledged, other answers ${JSON.stringify([...load.other])}`);
    for (const ms of takeovers) assert.ok(ms < 1200 + 8000, `takeovers in ${takeovers.join(', ')} ms`);
    for (const s of load.other.keys()) assert.ok([503, 0].includes(s), `only refusals that invite a retry: ${JSON.stringify([...load.other])}`);
    await allOnSequencer(clients[0]!, load.acked, `http://127.0.0.1:${seq.port}`);
    assert.ok(load.acked.size > 3 * KILLS, `${load.acked.size} orders acknowledged`);
  } finally {
    for (const p of procs) await p.svc?.stop('SIGKILL').catch(() => undefined);
    await nats.stop();
    rmSync(c.dir, { recursive: true, force: true });
  }
});

test('a sequencer paused past its lease (SIGSTOP): the standby takes over; resumed, it stops taking writes at once, its late records never reach the stream, and it follows as a standby with its unconfirmed tail moved aside', { skip, timeout: 300_000 }, async () => {
  const nats = await startNatsServer({ secure: true });
  const c = await cluster(nats);
  const procs: Proc[] = [];
  try {
    const [a, b, g] = await Promise.all(['a', 'b', 'g'].map((n) => c.proc(n)));
    procs.push(a, b, g);
    await c.start(a, 'sequencer');
    await Promise.all([c.start(b, 'standby'), c.start(g, 'gateway')]);
    const gBase = `http://127.0.0.1:${g.port}`;
    const admin = async (path: string, body: unknown) => {
      const r = await fetch(`${gBase}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(r.status, 200, `${path}: ${await r.clone().text()}`);
    };
    const cid = `0x${'7d'.repeat(32)}`;
    await admin('/admin/events', [{ title: 'Pause', slug: 'pause', endDate: '2027-06-30T00:00:00Z', markets: [{ question: 'Paused?', conditionId: cid, orderPriceMinTickSize: 0.01, orderMinSize: '1' }] }]);
    const info = await TestClient.info(gBase);
    const client = new TestClient(gBase, DEMO_WALLETS[3].privateKey, info);
    await admin(`/admin/wallets/${client.address}/deposit`, { amount: '10000' });
    await client.createKey(1);
    await until('the gateway holds the market', async () => ((await (await fetch(`${gBase}/markets/${cid}`)).json()) as { tokens?: unknown[] }).tokens !== undefined);
    const token = ((await (await fetch(`${gBase}/markets/${cid}`)).json()) as { tokens: Array<{ token_id: string }> }).tokens[0]!.token_id;
    const load = orderLoad([client], token);
    await until('orders acknowledged', () => load.acked.size >= 10);

    a.svc!.child.kill('SIGSTOP');
    try {
      await until('the standby takes orders', async () => (await writeStatus(b)) === 401, 30_000);
      const before = load.acked.size;
      await until('orders acknowledged by the new sequencer', () => load.acked.size > before + 5, 30_000);
    } finally {
      a.svc!.child.kill('SIGCONT');
    }
    // Resumed: it finds its lease gone before anything else, refuses writes, then follows as a standby.
    await until('the paused node follows as a standby', async () => (await writeStatus(a)) === 421, 30_000);
    await load.stop();
    assert.match(a.svc!.tail(), /sequencer lease lost/);
    for (const s of load.other.keys()) assert.ok([503, 0].includes(s), `only refusals that invite a retry: ${JSON.stringify([...load.other])}`);
    await allOnSequencer(client, load.acked, `http://127.0.0.1:${b.port}`);
    // Its store either was a prefix of the stream or was moved aside; either way it now holds the stream's state.
    await until('the old sequencer caught up as a standby', async () => (await journalSeqOf(`http://127.0.0.1:${a.port}`)) >= (await journalSeqOf(`http://127.0.0.1:${b.port}`)));
  } finally {
    for (const p of procs) await p.svc?.stop('SIGKILL').catch(() => undefined);
    await nats.stop();
    rmSync(c.dir, { recursive: true, force: true });
  }
});

test("a store becoming a standby's: a prefix of the stream follows on; an unconfirmed tail of a store that waited for the stream is moved aside; one that did not wait refuses to start, naming the records", { skip }, async () => {
  const nats = await startNatsServer();
  const link = (await openNatsLink({ natsUrl: nats.url, insecure: true }, log, () => false, 'prep-test'))!;
  try {
    await ensureStream(link.jsm, { stream: 'PM_PREP', replicas: 1 });
    /** A sequencer's store of `n` deposit batches under term 1; the first `published` of its records in the stream. */
    const sequencerStore = async (n: number, published: number, acksWaited: boolean) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'pm-fo-prep-'));
      const store = openStore({ dataDir });
      const rlog = ReplicationLog.open(store);
      rlog.beginTerm(1);
      const writer = new JournalWriter(store, 0, () => 1_700_000_000_000, rlog);
      for (let i = 1; i <= n; i++) {
        writer.append(depositEvent('deposit', '0x00000000000000000000000000000000000000b2', i));
        await writer.flush()!.committed;
      }
      if (acksWaited) await store.meta.put(metaKeys.acksAfterStream, true);
      await new Promise((r) => setImmediate(r));
      const last = await streamLastRseq(link.jsm, 'PM_PREP');
      for (let r = last + 1; r <= published; r++) await link.js.publish('pm_prep.batches', encodeBatch(readReplicatedBatch(store, r)!, CLUSTER_KEYS, 'pm_prep.batches'), { expect: { lastSequence: r - 1 } });
      await store.close();
      return dataDir;
    };
    // Records 1..4 in the stream (the term record and three batches): a store holding exactly those follows on.
    const prefix = await sequencerStore(3, 4, true);
    assert.equal(await prepareStandbyStore(prefix, link, 'PM_PREP', CLUSTER_KEYS, log), 'follows');
    const reopened = openStore({ dataDir: prefix });
    assert.equal(reopened.meta.get(metaKeys.replicaAppliedRseq), 4);
    await reopened.close();
    // A store of the same term with records 5 and 6 the stream never got, which waited for the stream: moved aside.
    const ahead = await sequencerStore(5, 4, true);
    assert.equal(await prepareStandbyStore(ahead, link, 'PM_PREP', CLUSTER_KEYS, log), 'moved aside');
    assert.equal(existsSync(join(ahead, 'data.mdb')), false);
    assert.ok(readdirSync(dirname(ahead)).some((f) => f.startsWith(`${basename(ahead)}.deposed-`)), 'the old store is kept beside');
    // The same without waiting for the stream: refused, naming the records, and left where it is.
    const unsafe = await sequencerStore(5, 4, false);
    await assert.rejects(prepareStandbyStore(unsafe, link, 'PM_PREP', CLUSTER_KEYS, log), /records 5\.\.6 of .* are not in the stream/);
    assert.equal(existsSync(join(unsafe, 'data.mdb')), true);
  } finally {
    await link.close();
    await nats.stop();
  }
});
