/**
 * The snapshot bucket (replication/snapshot-store.ts) under the users of tools/nats-config.ts, over a real
 * nats-server: a follower reads a snapshot's files through a push consumer with flow control, which the
 * server asks for on `$JS.FC.<bucket stream>.>` once a few MB are pending, and a reader that may not answer
 * there stalls (a 4 MB file never finished without that permission). A file several times that size ships as
 * the sequencer's user and comes back whole as the replica's, with nothing of either refused by the server;
 * a download told to stop gives up short of the file.
 * Skipped, with the reason, where nats-server is missing; failing under CI.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { SnapshotManifest } from '../../src/journal/checkpoints/snapshots.ts';
import { openNatsLink, type NatsLink } from '../../src/replication/nats-link.ts';
import { SnapshotBucket } from '../../src/replication/snapshot-store.ts';
import { createLogger } from '../../src/runtime/log.ts';
import { startNatsServer, type NatsServer } from '../../tools/nats-server.ts';
import { CLUSTER_KEYS, natsSkip } from '../fixtures/cluster.ts';

const skip = natsSkip();
const log = createLogger('silent');
const FILE_BYTES = 12 * 2 ** 20;

async function linkAs(nats: NatsServer, role: string): Promise<NatsLink> {
  const c = nats.credentials(role);
  return (await openNatsLink({ natsUrl: nats.url, user: c.natsUser, password: c.natsPassword }, log, () => false, role))!;
}

test(`a ${FILE_BYTES / 2 ** 20} MB snapshot file ships as the sequencer's user and comes back whole as the replica's, flow control answered`, { skip }, async () => {
  const nats = await startNatsServer({ secure: true });
  const dir = mkdtempSync(join(tmpdir(), 'pm-snapshot-store-'));
  const links: NatsLink[] = [];
  try {
    const data = randomBytes(FILE_BYTES);
    writeFileSync(join(dir, 'data.mdb'), data);
    const sha256 = createHash('sha256').update(data).digest('hex');
    const m: SnapshotManifest = { v: 1, name: 's000000000007-1', rseq: 7, lastRseq: 7, journalSeq: 7, stateHash: '0'.repeat(64), store: 'test', createdAt: 1, files: [{ name: 'data.mdb', bytes: FILE_BYTES, sha256 }] };
    links.push(await linkAs(nats, 'sequencer'));
    await (await SnapshotBucket.create(links[0]!, 'PM_JOURNAL', 1, CLUSTER_KEYS)).publish(dir, m);
    links.push(await linkAs(nats, 'replica'));
    const follower = (await SnapshotBucket.open(links[1]!, 'PM_JOURNAL', CLUSTER_KEYS))!;
    assert.deepEqual((await follower.list()).map((s) => s.name), [m.name]);
    const out = join(dir, 'fetched');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([follower.fetch(m, out), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('the download stalled (flow control unanswered?)')), 30_000)))]);
    clearTimeout(timer);
    assert.equal(createHash('sha256').update(readFileSync(join(out, 'data.mdb'))).digest('hex'), sha256);
    // A download told to stop (a backfill whose node stops) gives up after its first chunk, short of the file.
    const stopped = join(dir, 'stopped');
    await assert.rejects(follower.fetch(m, stopped, () => true), /download stopped/);
    assert.ok(statSync(join(stopped, 'data.mdb')).size < FILE_BYTES, 'not the whole file');
    const refused = nats.log().split('\n').filter((l) => /Violation/.test(l));
    assert.deepEqual(refused, [], 'nothing the two users did was refused by the server');
  } finally {
    for (const l of links) await l.close();
    rmSync(dir, { recursive: true, force: true });
    await nats.stop();
  }
});
