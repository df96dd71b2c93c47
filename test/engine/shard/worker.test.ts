/**
 * The shard worker driven through its rings, as the shard link drives it but with no engine around it:
 * each command gets its group (FILL / CANCELED records, then one RESULT) in command order, snapshots are
 * published with the RESULT count they reflect, a tick change rebuilds the book, GTD orders expire by the
 * clock, STOP ends the thread, and an unexpected throw stops the shard with R_SHARD_ERROR and a 'fatal'.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, test } from 'node:test';
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { CancelReason, FillKind, MatchCode, Side, Tif, type Outcome, type PlaceCommand } from '../../../src/engine/book/api.ts';
import { BOOK_FACTORIES } from '../../../src/engine/shard/book-factory.ts';
import * as P from '../../../src/engine/shard/protocol.ts';
import { Ring } from '../../../src/engine/shard/ring.ts';
import { startTsWorker } from '../../../src/engine/thread.ts';

const T = 1_000_000;
const MARKET = 1;
const META: P.MarketMeta = { marketId: MARKET, conditionId: '0x' + 'ab'.repeat(32), tokenIds: ['101', '102'], negRisk: false, lastTradePips: [0, 0] };

interface Group {
  records: Array<P.FillRecord | P.CanceledRecord>;
  result?: P.ResultRecord;
  shardError?: number;
}

/** One shard worker with its two rings and meta port, as shard-link.ts sets them up. */
class Shard {
  readonly messages: P.WorkerMessage[] = [];
  private readonly commands = Ring.create(64, P.CMD_WORDS);
  readonly results = Ring.create(256, P.RES_WORDS);
  private readonly meta: MessagePort;
  readonly worker: Worker;
  private messageWaiters: Array<() => void> = [];
  private stderrText = '';

  /** `captureStderr`: the worker's stderr is kept (stderr()) instead of passed through. */
  constructor(snapshotIntervalMs: number, captureStderr = false) {
    const channel = new MessageChannel();
    this.meta = channel.port1;
    const data: P.ShardWorkerData = {
      shard: 0,
      commandRing: this.commands.sab,
      resultRing: this.results.sab,
      metaPort: channel.port2,
      bookModule: BOOK_FACTORIES.production.module,
      bookExport: BOOK_FACTORIES.production.export,
      snapshotIntervalMs,
    };
    this.worker = startTsWorker(new URL('../../../src/engine/shard/worker.ts', import.meta.url), { workerData: data, transferList: [channel.port2], stderr: captureStderr });
    if (captureStderr) this.worker.stderr.on('data', (d: Buffer) => (this.stderrText += d.toString()));
    this.worker.on('message', (m: P.WorkerMessage) => {
      this.messages.push(m);
      for (const w of this.messageWaiters.splice(0)) w();
    });
  }

  stderr(): string {
    return this.stderrText;
  }

  async ready(): Promise<void> {
    await this.message((m) => m.type === 'ready');
  }

  /** The first message (received so far or later) that `pred` accepts; it is removed from `messages`. */
  async message<M extends P.WorkerMessage>(pred: (m: P.WorkerMessage) => m is M, timeoutMs?: number): Promise<M>;
  async message(pred: (m: P.WorkerMessage) => boolean, timeoutMs?: number): Promise<P.WorkerMessage>;
  async message(pred: (m: P.WorkerMessage) => boolean, timeoutMs = 10_000): Promise<P.WorkerMessage> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const i = this.messages.findIndex(pred);
      if (i >= 0) return this.messages.splice(i, 1)[0];
      assert.ok(Date.now() < until, 'the worker did not send the expected message');
      await new Promise<void>((resolve) => {
        this.messageWaiters.push(resolve);
        setTimeout(resolve, 50).unref();
      });
    }
  }

  send(encode: (w: Float64Array, off: number) => void): void {
    const off = this.commands.tryClaim();
    assert.ok(off >= 0, 'command ring full');
    encode(this.commands.words, off);
    this.commands.publish();
  }

  register(reqId: number, tickPips: number, meta: P.MarketMeta = META): void {
    this.meta.postMessage(meta);
    this.send((w, off) => P.encodeRegister(w, off, { marketId: meta.marketId, tickPips, minSizeUnits: T, makerFeeBps: 0, takerFeeBps: 100, reqId }));
  }

  place(c: Partial<PlaceCommand> & Pick<PlaceCommand, 'handle' | 'owner' | 'side' | 'pricePips' | 'sizeUnits'>, marketId = MARKET): void {
    const cmd: PlaceCommand = { outcome: 0, tif: Tif.GTC, postOnly: false, budgetUnits: 0, expiresAt: 0, ...c };
    this.send((w, off) => P.encodePlace(w, off, marketId, cmd));
  }

  /** The next group the shard wrote: its records and the RESULT that closes it (or the shard's error). */
  async group(timeoutMs = 10_000): Promise<Group> {
    const ring = this.results;
    const w = ring.words;
    const records: Group['records'] = [];
    const until = Date.now() + timeoutMs;
    for (;;) {
      if (ring.available() === 0) {
        assert.ok(Date.now() < until, 'no RESULT from the shard');
        await ring.waitForDataAsync(200);
        continue;
      }
      // One record at a time, so records of later groups stay in the ring for the next call.
      const off = ring.consume();
      const op = w[off + P.F_OP];
      let done: Group | undefined;
      if (op === P.R_FILL) records.push(P.decodeFill(w, off));
      else if (op === P.R_CANCELED) records.push(P.decodeCanceled(w, off));
      else if (op === P.R_RESULT) done = { records, result: P.decodeResult(w, off) };
      else if (op === P.R_SHARD_ERROR) done = { records, shardError: P.decodeShardError(w, off).code };
      else assert.fail(`unknown result record ${op}`);
      ring.release();
      if (done !== undefined) return done;
    }
  }

  close(): Promise<number> {
    this.meta.close();
    return this.worker.terminate();
  }
}

function result(cmdOp: number, id: number, code: number, filledUnits: number, restingUnits: number, marketId = MARKET): P.ResultRecord {
  return { cmdOp, id, code, filledUnits, restingUnits, marketId };
}

function canceled(handle: number, owner: number, outcome: Outcome, side: Side, pricePips: number, remainingUnits: number, reason: CancelReason): P.CanceledRecord {
  return { handle, owner, outcome, side, pricePips, remainingUnits, reason, marketId: MARKET };
}

interface BookBody {
  market: string;
  asset_id: string;
  bids: Array<{ price: string; size: string }>;
  asks: Array<{ price: string; size: string }>;
  tick_size: string;
  last_trade_price: string;
}

const shards: Shard[] = [];
after(async () => {
  for (const s of shards) await s.close();
});

test('a shard answers each command with its group, in command order, and publishes what its RESULTs changed', async () => {
  // A long interval: after the first publication of a market, only OP_SNAPSHOT publishes (deterministic).
  const shard = new Shard(60_000);
  shards.push(shard);
  await shard.ready();

  shard.register(1, 100);
  assert.deepEqual(await shard.group(), { records: [], result: result(P.OP_REGISTER_MARKET, 1, MatchCode.OK, 0, 0) });
  const first = await shard.message((m): m is P.SnapshotMessage => m.type === 'snapshots');
  assert.deepEqual(first.items.map((i) => [i.tokenId, i.version]), [['101', 1], ['102', 1]], 'a new market is published at once');
  assert.equal(first.resultSeq, 1);
  assert.deepEqual((JSON.parse(first.items[0].json) as BookBody).bids, []);

  // A resting bid, then a sell that crosses it: one fill at the maker's price, taker fee 100 bps.
  shard.place({ handle: 1, owner: 1, side: Side.BUY, pricePips: 4000, sizeUnits: 10 * T });
  shard.place({ handle: 2, owner: 2, side: Side.SELL, pricePips: 3900, sizeUnits: 4 * T });
  assert.deepEqual(await shard.group(), { records: [], result: result(P.OP_PLACE, 1, MatchCode.OK, 0, 10 * T) });
  const fill = await shard.group();
  assert.deepEqual(fill.result, result(P.OP_PLACE, 2, MatchCode.OK, 4 * T, 0));
  assert.deepEqual(fill.records, [
    {
      marketId: MARKET,
      kind: FillKind.TRANSFER,
      takerHandle: 2,
      makerHandle: 1,
      takerOwner: 2,
      makerOwner: 1,
      takerOutcome: 0,
      makerOutcome: 0,
      takerSide: Side.SELL,
      makerSide: Side.BUY,
      sizeUnits: 4 * T,
      takerPricePips: 4000,
      makerPricePips: 4000,
      takerUsdc: 1_600_000,
      makerUsdc: 1_600_000,
      takerFee: 16_000, // floor(100 bps * min(0.4, 0.6) * 4 tokens)
      makerFee: 0,
      makerRemainingUnits: 6 * T,
    },
  ]);

  // Post-only BUY of outcome 1 at 0.61 is an ask at 0.39 in outcome-0 space: it crosses and is refused.
  shard.place({ handle: 3, owner: 3, outcome: 1, side: Side.BUY, pricePips: 6100, sizeUnits: 2 * T, postOnly: true });
  assert.deepEqual(await shard.group(), { records: [], result: result(P.OP_PLACE, 3, MatchCode.POST_ONLY_CROSSES, 0, 0) });

  // Owner 1 sells into its own bid: the bid is canceled (self-trade prevention) and the sell rests.
  shard.place({ handle: 4, owner: 1, side: Side.SELL, pricePips: 4000, sizeUnits: 2 * T });
  assert.deepEqual(await shard.group(), {
    records: [canceled(1, 1, 0, Side.BUY, 4000, 6 * T, CancelReason.SELF_TRADE)],
    result: result(P.OP_PLACE, 4, MatchCode.OK, 0, 2 * T),
  });

  // A cancel of a handle the book does not hold changes nothing.
  shard.send((w, off) => P.encodeCancel(w, off, MARKET, 99));
  assert.deepEqual(await shard.group(), { records: [], result: result(P.OP_CANCEL, 99, MatchCode.UNKNOWN_ORDER, 0, 0) });

  // OP_SNAPSHOT publishes the changed market now, numbered with the RESULTs written before it.
  shard.send((w, off) => P.encodeSnapshot(w, off, MARKET, 2));
  assert.deepEqual(await shard.group(), { records: [], result: result(P.OP_SNAPSHOT, 2, MatchCode.OK, 0, 0) });
  const snap = await shard.message((m): m is P.SnapshotMessage => m.type === 'snapshots' && m.reqId === 2);
  assert.equal(snap.resultSeq, 6, 'register, four placements and a cancel came before it');
  assert.equal(snap.complete, true);
  assert.deepEqual(snap.items.map((i) => [i.tokenId, i.version]), [['101', 2], ['102', 2]]);
  const [yes, no] = snap.items.map((i) => JSON.parse(i.json) as BookBody);
  assert.deepEqual([yes.bids, yes.asks], [[], [{ price: '0.4', size: '2' }]]);
  assert.deepEqual([no.bids, no.asks], [[{ price: '0.6', size: '2' }], []], 'outcome 1 mirrors outcome 0');
  assert.deepEqual([yes.last_trade_price, no.last_trade_price], ['0.4', ''], 'the fill traded outcome 0 only');

  // A tick change rebuilds the book: an order off the new tick is canceled, the others keep resting.
  shard.place({ handle: 5, owner: 5, side: Side.BUY, pricePips: 3500, sizeUnits: T });
  assert.deepEqual((await shard.group()).result, result(P.OP_PLACE, 5, MatchCode.OK, 0, T));
  shard.register(3, 1000);
  assert.deepEqual(await shard.group(), {
    records: [canceled(5, 5, 0, Side.BUY, 3500, T, CancelReason.USER)],
    result: result(P.OP_REGISTER_MARKET, 3, MatchCode.OK, 0, 0),
  });

  // A GTD order expires by the clock, reported as a CANCELED group closed by an OP_EXPIRE RESULT.
  const expiresAt = Math.floor(Date.now() / 1000) + 1;
  shard.place({ handle: 6, owner: 6, side: Side.BUY, tif: Tif.GTD, pricePips: 3000, sizeUnits: T, expiresAt });
  assert.deepEqual((await shard.group()).result, result(P.OP_PLACE, 6, MatchCode.OK, 0, T));
  const expiry = await shard.group(5_000);
  assert.ok(Date.now() >= expiresAt * 1000, 'not before its expiry');
  // Its RESULT's id is the unix second the group expired at (protocol.ts): the order's, or a later one if the
  // shard's timer woke late.
  const at = expiry.result!.id;
  assert.ok(at >= expiresAt && at <= Math.ceil(Date.now() / 1000), `expired at second ${at}, due at ${expiresAt}`);
  assert.deepEqual(expiry, { records: [canceled(6, 6, 0, Side.BUY, 3000, T, CancelReason.EXPIRED)], result: result(P.OP_EXPIRE, at, MatchCode.OK, 1, 0, 0) });

  // Resolution: every resting order leaves with the reason given.
  shard.send((w, off) => P.encodeCancelAllMarket(w, off, MARKET, CancelReason.MARKET_RESOLVED, 4));
  assert.deepEqual(await shard.group(), {
    records: [canceled(4, 1, 0, Side.SELL, 4000, 2 * T, CancelReason.MARKET_RESOLVED)],
    result: result(P.OP_CANCEL_ALL_MARKET, 4, MatchCode.OK, 1, 0),
  });

  // STOP is answered, then the thread ends by itself.
  const exited = once(shard.worker, 'exit');
  shard.send((w, off) => P.encodeStop(w, off, 5));
  assert.deepEqual(await shard.group(), { records: [], result: result(P.OP_STOP, 5, MatchCode.OK, 0, 0, 0) });
  const [code] = (await exited) as [number];
  assert.equal(code, 0);
});

test('an infinite interval (the service): only OP_SNAPSHOT publishes, and no timer waits for a publication', async () => {
  const shard = new Shard(Infinity, true);
  shards.push(shard);
  await shard.ready();
  shard.register(1, 100);
  assert.deepEqual(await shard.group(), { records: [], result: result(P.OP_REGISTER_MARKET, 1, MatchCode.OK, 0, 0) });
  shard.place({ handle: 1, owner: 1, side: Side.BUY, pricePips: 4000, sizeUnits: 10 * T });
  assert.deepEqual(await shard.group(), { records: [], result: result(P.OP_PLACE, 1, MatchCode.OK, 0, 10 * T) });
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(shard.messages.filter((m) => m.type === 'snapshots').length, 0, 'not even a new market is published unasked');

  shard.send((w, off) => P.encodeSnapshot(w, off, MARKET, 2));
  assert.deepEqual(await shard.group(), { records: [], result: result(P.OP_SNAPSHOT, 2, MatchCode.OK, 0, 0) });
  const snap = await shard.message((m): m is P.SnapshotMessage => m.type === 'snapshots' && m.reqId === 2);
  assert.deepEqual([snap.resultSeq, snap.complete], [2, true]);
  assert.deepEqual((JSON.parse(snap.items[0].json) as BookBody).bids, [{ price: '0.4', size: '10' }]);
  // An interval of Infinity handed to setTimeout overflows to 1 ms: a timer re-armed forever for nothing.
  assert.doesNotMatch(shard.stderr(), /TimeoutOverflowWarning/);
});

test('a command the shard cannot apply stops it: R_SHARD_ERROR in the ring, details by postMessage, nothing more applied', async () => {
  const shard = new Shard(20);
  shards.push(shard);
  await shard.ready();
  shard.place({ handle: 1, owner: 1, side: Side.BUY, pricePips: 4000, sizeUnits: T }, 42);
  shard.register(1, 100);
  const g = await shard.group();
  assert.deepEqual(g, { records: [], shardError: 5002 });
  const fatal = await shard.message((m) => m.type === 'fatal');
  assert.match((fatal as { message: string }).message, /unknown market 42/);
  // The REGISTER sent after the bad command is never answered: the shard stopped.
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(shard.messages.filter((m) => m.type === 'snapshots').length, 0);
  assert.equal(shard.results.available(), 0);
});
