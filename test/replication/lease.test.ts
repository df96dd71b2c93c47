/**
 * The sequencer's lease (src/replication/lease.ts) on a real nats-server: one node takes it, a second cannot
 * while it is held; a renewal is a compare-and-set, so a node whose revision is stale is refused; the key
 * expires once nobody renews it and can then be taken again; and a holder says once that it lost the lease,
 * when another node took it or when it could not renew in time; a value no node wrote (its authenticator
 * fails) is nobody's lease and never deposes the holder. Skipped where nats-server is missing
 * (failing under CI), as the cluster tests.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openNatsLink, type NatsLink } from '../../src/replication/nats-link.ts';
import { Kvm } from '@nats-io/kv';
import { LeaseHolder, LeaseStore, LeaseWatcher } from '../../src/replication/lease.ts';
import { ClusterKeys } from '../../src/replication/seal.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { startNatsServer } from '../../tools/nats-server.ts';
import { CLUSTER_KEYS, natsSkip } from '../fixtures/cluster.ts';

const skip = natsSkip();
const times = { ttlMs: 1200, renewMs: 300, pollMs: 100 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('one holder at a time; renewals are compare-and-set; an unrenewed key expires; a holder hears once that it lost the lease', { skip }, async () => {
  const nats = await startNatsServer();
  const links: NatsLink[] = [];
  try {
    const link = async () => {
      const l = (await openNatsLink({ natsUrl: nats.url, insecure: true }, silentLogger, () => false, 'lease-test'))!;
      links.push(l);
      return LeaseStore.open(l, 'PM_LEASE', 1, times.ttlMs, CLUSTER_KEYS);
    };
    const [a, b] = [await link(), await link()];
    assert.equal(await a.read(), undefined);
    const rev = await a.create({ node: 'a', url: 'http://a', term: 1 });
    assert.ok(rev !== undefined);
    assert.equal(await b.create({ node: 'b', url: 'http://b', term: 2 }), undefined, 'held: nobody else takes it');
    assert.deepEqual((await b.read())?.value, { node: 'a', url: 'http://a', term: 1 });
    const rev2 = await a.update({ node: 'a', url: 'http://a', term: 1 }, rev!, 1000);
    assert.ok(rev2 !== undefined && rev2 > rev!);
    assert.equal(await b.update({ node: 'b', url: 'http://b', term: 2 }, rev!, 1000), undefined, 'a stale revision is refused');

    // Renewed by its holder, the key stays past its TTL; another node's update makes the holder lose it, once.
    const lost: string[] = [];
    const holder = new LeaseHolder(a, { node: 'a', url: 'http://a', term: 1 }, rev2!, times, (why) => lost.push(why), silentLogger);
    holder.start();
    await sleep(times.ttlMs * 2);
    assert.deepEqual(lost, []);
    assert.equal((await b.read())?.value?.node, 'a');
    // The holder renews every renewMs, so a renewal can land between b's read and its write (b is then
    // refused, as above): b reads again and writes over the newer revision.
    let taken: number | undefined;
    for (let i = 0; i < 20 && taken === undefined; i++) taken = await b.update({ node: 'b', url: 'http://b', term: 2 }, (await b.read())!.revision, 1000);
    assert.ok(taken !== undefined, 'another node takes the key at the revision it read');
    await sleep(times.renewMs * 3);
    assert.deepEqual(lost, ['another node holds the lease']);
    holder.stop();

    // Nobody renews: the key expires and can be taken again.
    await sleep(times.ttlMs + 600);
    assert.equal(await a.read(), undefined);
    const rev3 = await a.create({ node: 'a', url: 'http://a', term: 3 });
    assert.ok(rev3 !== undefined);

    // A holder that cannot renew in time (NATS stopped) stops before the TTL would let another node in.
    const late: string[] = [];
    const h2 = new LeaseHolder(a, { node: 'a', url: 'http://a', term: 3 }, rev3!, times, (why) => late.push(why), silentLogger);
    h2.start();
    const t0 = Date.now();
    nats.pause();
    try {
      while (late.length === 0 && Date.now() - t0 < 5000) await sleep(20);
    } finally {
      nats.resume();
    }
    h2.stop();
    assert.equal(late.length, 1);
    assert.match(late[0]!, /not renewed for \d+ ms/);
    assert.ok(Date.now() - t0 < times.ttlMs + 300, 'it stopped within the TTL');
  } finally {
    for (const l of links) await l.close().catch(() => undefined);
    await nats.stop();
  }
});

test("a lease value no node wrote is nobody's lease: it names no holder, a holder writes its own back over it, a starting sequencer takes it, a watcher does not count it vacant", { skip }, async () => {
  const nats = await startNatsServer();
  const links: NatsLink[] = [];
  try {
    const l = (await openNatsLink({ natsUrl: nats.url, insecure: true }, silentLogger, () => false, 'lease-test'))!;
    links.push(l);
    const store = await LeaseStore.open(l, 'PM_FORGE', 1, times.ttlMs, CLUSTER_KEYS);
    // The attacker: a connection with the bucket's subjects open to it, and no key (its own master key).
    const kv = await new Kvm(l.js).open('pm_forge_cluster');
    const theirs = await LeaseStore.open(l, 'PM_FORGE', 1, times.ttlMs, ClusterKeys.fromMaster(Buffer.alloc(32, 5)));
    const forge = (v: object) => kv.put('sequencer', JSON.stringify(v));

    // A forged value where nobody holds it: read as a forgery, counted once per revision; a sequencer takes it.
    await forge({ node: 'evil', url: 'http://evil', term: 99 });
    assert.deepEqual(await store.read(), { forged: true, revision: 1 });
    await store.read();
    assert.equal(store.forged, 1);
    const rev = await store.take({ node: 'a', url: 'http://a', term: 1 }, 1000);
    assert.ok(rev !== undefined, 'taken over the forgery');
    assert.equal((await store.read())?.value?.node, 'a');
    // A value with a mac of another key, or the holder's own mac on changed fields, is as forged.
    assert.equal((await theirs.read())?.forged, true, "another cluster's key does not read ours as authentic");
    const real = JSON.parse(new TextDecoder().decode((await kv.get('sequencer'))!.value)) as Record<string, unknown>;
    // A watcher sees the holder; on a forgery it names nobody and the lease is not vacant.
    const watcher = new LeaseWatcher(store, times.pollMs);
    watcher.start();
    await sleep(times.pollMs * 2);
    assert.equal(watcher.holder?.url, 'http://a');

    // The holder renews; a forgery replaces its value (its renewal's compare-and-set fails): it writes its own
    // back over it and keeps the lease.
    const lost: string[] = [];
    const holder = new LeaseHolder(store, { node: 'a', url: 'http://a', term: 1 }, rev!, times, (why) => lost.push(why), silentLogger);
    holder.start();
    await forge({ ...real, url: 'http://evil' });
    await sleep(times.pollMs * 2);
    assert.equal(watcher.holder, undefined, 'a forgery names no holder (no 421 names its URL, no gateway sends to its term)');
    assert.equal(watcher.vacant, false, 'nor is the lease vacant to a standby');
    await sleep(times.renewMs * 3);
    assert.deepEqual(lost, [], 'not deposed by a forgery');
    assert.deepEqual((await store.read())?.value, { node: 'a', url: 'http://a', term: 1 }, 'the holder wrote its value back');
    assert.equal((watcher.holder as { url?: string } | undefined)?.url, 'http://a');
    assert.ok(store.forged >= 2);
    holder.stop();
    watcher.stop();
  } finally {
    for (const l of links) await l.close().catch(() => undefined);
    await nats.stop();
  }
});
