/**
 * What an admin write changes is readable from the moment it is answered (issue 31, item 5): the import of
 * a market answers only once the engine has committed the market's `market` event, so the committed books
 * (GET /book, POST /books, the market channel) already hold its empty book; a tick change shows on /book at
 * once; a status change or a resolution answers only once what it journaled is durable. And a read of a
 * token the engine knows while that commit is still in flight waits for it rather than answering 503.
 *
 * The commits are made slow (or held) by wrapping the journal writer's last put of a batch, meta.journalSeq,
 * as test/e2e/read-committed.test.ts does: on the code before the fix every check here fails every time.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type App } from '../../src/node/app.ts';
import type { BookEvent } from '../../src/edge/schemas/stream.ts';
import { metaKeys } from '../../src/journal/keys.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { StreamClient, type StreamEvent } from '../../tools/stream-client.ts';
import { sleep } from '../fixtures/edge.ts';

const cid = (n: number) => `0x${n.toString(16).padStart(2, '0').repeat(32)}`;

let app: App;
let dir: string;
let base: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pm-admin-raw-'));
  app = await startApp(
    testConfig({
      dataDir: dir,
      http: { port: 0 },
      adminToken: 't',
      demo: 'off',
      rateLimits: { enabled: false },
      auth: { signatureThreads: 1 },
      stream: { bookIntervalMs: 0 },
    }),
    { log: silentLogger },
  );
  base = `http://127.0.0.1:${app.port}`;
});

after(async () => {
  await app.stop();
  rmSync(dir, { recursive: true, force: true });
});

const admin = (path: string, body: unknown) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: JSON.stringify(body) });

const importMarket = (n: number, tick = 0.01) =>
  admin('/admin/events', [
    { title: `Read after write ${n}`, slug: `read-after-write-${n}`, endDate: '2030-06-30T00:00:00Z', markets: [{ question: `Readable ${n}?`, conditionId: cid(n), orderPriceMinTickSize: tick, orderMinSize: '1' }] },
  ]);

const tokensOf = (n: number) => app.ctx.catalog.read.marketByCondition(cid(n))!.clobTokenIds;

/**
 * Every journal commit is seen `ms` late (or, with `gate`, not until it opens): lmdb-js resolves the batch's
 * puts at its commit, and the group commit waits on the last of them.
 */
function slowCommits(o: { ms: number } | { gate: Promise<void> }): () => void {
  const meta = app.ctx.store.meta;
  const put = meta.put.bind(meta);
  const late = 'gate' in o ? () => o.gate : () => sleep(o.ms);
  meta.put = ((k: string, v: unknown) => {
    const p = put(k, v);
    return k === metaKeys.journalSeq ? p.then(async (x) => (await late(), x)) : p;
  }) as typeof meta.put;
  return () => {
    meta.put = put;
  };
}

/** Nothing the engine journaled is still waiting for its commit. */
const allCommitted = () => app.ctx.engine.committedSeq === app.ctx.engine.stats().journalSeq;

test('a token just imported has its empty book on /book, /books and the market channel at once', async () => {
  const ws = await StreamClient.connect(`ws://127.0.0.1:${app.port}/ws/market`);
  const restore = slowCommits({ ms: 150 });
  try {
    const imported = await importMarket(1);
    const committedAtAnswer = allCommitted();
    assert.equal(imported.status, 200, await imported.text());
    const [yes, no] = tokensOf(1);
    // Sent right after the answer, on the same keep-alive connection, while later commits are still slow.
    const book = await fetch(`${base}/book?token_id=${yes}`);
    assert.equal(book.status, 200);
    const body = (await book.json()) as { asset_id: string; market: string; bids: unknown[]; asks: unknown[]; tick_size: string };
    assert.deepEqual([body.asset_id, body.market, body.bids, body.asks, body.tick_size], [yes, cid(1), [], [], '0.01']);
    const books = await fetch(`${base}/books`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ token_id: yes }, { token_id: no }]) });
    assert.equal(books.status, 200);
    assert.deepEqual(((await books.json()) as { asset_id: string }[]).map((b) => b.asset_id), [yes, no]);
    ws.subscribeMarket([no]);
    const dump = await ws.next<BookEvent>((e: StreamEvent) => e.event_type === 'book' && e.asset_id === no, 2000);
    assert.equal(dump.tick_size, '0.01');
    assert.ok(committedAtAnswer, 'the import is answered after the commit of the market it registered');
  } finally {
    restore();
    ws.close();
  }
});

test('a tick size change shows on /book as soon as the import that made it is answered', async () => {
  assert.equal((await importMarket(2, 0.01)).status, 200);
  const [yes] = tokensOf(2);
  const restore = slowCommits({ ms: 150 });
  try {
    const changed = await importMarket(2, 0.001);
    assert.equal(changed.status, 200, await changed.text());
    const book = await fetch(`${base}/book?token_id=${yes}`);
    assert.equal(book.status, 200);
    assert.equal(((await book.json()) as { tick_size: string }).tick_size, '0.001');
  } finally {
    restore();
  }
});

test('a read of a token whose market is still committing waits for the commit instead of answering 503', async () => {
  let open = () => {};
  const restore = slowCommits({ gate: new Promise<void>((r) => (open = r)) });
  const answered: string[] = [];
  try {
    const imported = importMarket(3).then((r) => (answered.push('import'), r));
    // The catalog holds the market before the engine registers it, and the engine before it is committed.
    let yes: string | undefined;
    for (let i = 0; i < 500 && (yes === undefined || app.ctx.engine.tokenMarketOf(yes) === undefined); i++) {
      yes = app.ctx.catalog.read.marketByCondition(cid(3))?.clobTokenIds[0];
      await sleep(2);
    }
    assert.ok(yes !== undefined && app.ctx.engine.tokenMarketOf(yes) !== undefined, 'the engine registered the market');
    const book = fetch(`${base}/book?token_id=${yes}`).then((r) => (answered.push('book'), r));
    await sleep(100);
    assert.deepEqual(answered, [], 'neither the import nor the read is answered while the commit is held');
    open();
    const [i, b] = await Promise.all([imported, book]);
    assert.equal(i.status, 200);
    assert.equal(b.status, 200, await b.clone().text());
    assert.equal(((await b.json()) as { asset_id: string }).asset_id, yes);
  } finally {
    open();
    restore();
  }
});

test('a status change and a resolution are answered only once what they journaled is committed', async () => {
  assert.equal((await importMarket(4)).status, 200);
  const [yes] = tokensOf(4);
  const restore = slowCommits({ ms: 150 });
  try {
    const closed = await admin(`/admin/markets/${cid(4)}/status`, { closed: true });
    assert.equal(closed.status, 200, await closed.text());
    assert.ok(allCommitted(), 'the status change is answered after its commit');
    assert.equal(app.ctx.engine.market(cid(4))?.acceptingOrders, false);
    assert.equal((await fetch(`${base}/book?token_id=${yes}`)).status, 200);

    const resolved = await admin(`/admin/markets/${cid(4)}/resolve`, { winningOutcomeIndex: 0 });
    assert.equal(resolved.status, 200, await resolved.text());
    assert.ok(allCommitted(), 'the resolution is answered after its commits');
    assert.equal((await fetch(`${base}/book?token_id=${yes}`)).status, 200);
  } finally {
    restore();
  }
});
