/**
 * The shard link with a real worker: RESULTs reach the sequencer in command order with the records they
 * caused, a full command ring queues commands in order up to the overflow bound and refuses past it, and
 * a halt hands back every command still in flight.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { FillKind, MatchCode } from '../../../src/engine/book/api.ts';
import { Lifecycle } from '../../../src/engine/lifecycle.ts';
import type { OrderState } from '../../../src/engine/orders/order-table.ts';
import { OP_CANCEL, OP_PLACE, OP_REGISTER_MARKET, OP_STOP, type FillRecord, type ResultRecord } from '../../../src/engine/shard/protocol.ts';
import type { Inflight, ShardLinkOptions, ShardRecord } from '../../../src/engine/shard/link-types.ts';
import { ShardLink } from '../../../src/engine/shard/shard-link.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { T, order, parts, record, type Parts } from '../engine-parts.ts';

interface Seen {
  results: ResultRecord[];
  answered: Array<{ op: number; id: number; code: number; records: ShardRecord[] }>;
  drains: number;
}

const links: ShardLink[] = [];
after(async () => {
  for (const l of links) await l.terminate();
});

async function start(opts: Partial<ShardLinkOptions> = {}): Promise<{ link: ShardLink; life: Lifecycle; seen: Seen; p: Parts }> {
  const p = parts();
  const life = new Lifecycle(silentLogger);
  const seen: Seen = { results: [], answered: [], drains: 0 };
  const link = new ShardLink({ shards: 1, ...opts }, life, silentLogger, {
    snapshots: () => undefined,
    result: (_shard, r) => seen.results.push({ ...r }),
    expired: () => assert.fail('no GTD order here'),
    answered: (inf: Inflight, r, group) => {
      seen.answered.push({ op: inf.op, id: inf.id, code: r.code, records: [...group] });
      if (inf.op !== OP_PLACE && inf.op !== OP_CANCEL) inf.done(r);
    },
    drained: () => seen.drains++,
  });
  links.push(link);
  await link.start();
  const meta = { marketId: p.market.marketId, conditionId: p.market.conditionId, tokenIds: p.market.tokenIds, negRisk: false, lastTradePips: [0, 0] as [number, number] };
  await link.register(p.market, meta);
  return { link, life, seen, p };
}

function bid(p: Parts, price: number, size = T, wallet = '0x' + '1'.repeat(40)): OrderState {
  return order(p, record({ wallet, pricePips: price, sizeUnits: size }));
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    assert.ok(Date.now() - t0 < 10_000, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('each RESULT is shown first to `result`, then handed with its group to `answered`, in command order', async () => {
  const { link, seen, p } = await start();
  const buyer = bid(p, 4000, 2 * T);
  const other = bid(p, 3900, 2 * T);
  const seller = order(p, record({ wallet: '0x' + '2'.repeat(40), side: 'SELL', pricePips: 4000, sizeUnits: T }));
  assert.ok(link.place(buyer, 1, false, false));
  assert.ok(link.place(other, 1, false, false));
  assert.ok(link.place(seller, 2, false, false));
  await until(() => seen.answered.length === 4, 'four answers');
  assert.deepEqual(
    seen.answered.map((a) => [a.op, a.id, a.code]),
    [[OP_REGISTER_MARKET, 1, MatchCode.OK], [OP_PLACE, buyer.handle, MatchCode.OK], [OP_PLACE, other.handle, MatchCode.OK], [OP_PLACE, seller.handle, MatchCode.OK]],
  );
  assert.equal(seen.results.length, 4, 'every RESULT reaches `result`');
  const fill = seen.answered[3].records as FillRecord[];
  assert.deepEqual(fill.map((f) => [f.kind, f.takerHandle, f.makerHandle, f.sizeUnits]), [[FillKind.TRANSFER, seller.handle, buyer.handle, T]]);
  assert.ok(seen.drains > 0);
  await Promise.all(link.stop());
  assert.equal(seen.answered.at(-1)?.op, OP_STOP);
});

test('a full command ring queues commands in order up to the overflow bound, refuses past it, and forced commands still pass', async () => {
  const { link, seen, p } = await start({ commandRingSlots: 2, overflowLimit: 3 });
  const orders = [3000, 3100, 3200, 3300, 3400, 3500].map((price) => bid(p, price));
  const sent = orders.map((o) => link.place(o, 1, false, false));
  // The ring holds two (one, if the worker has not yet released the registration's slot: it publishes a
  // RESULT before it releases the command), the queue three more, and the rest are refused.
  const accepted = sent.indexOf(false);
  assert.ok(accepted === 4 || accepted === 5, `accepted ${accepted}`);
  assert.deepEqual(sent, orders.map((_, i) => i < accepted), 'refused only past the bound, and from then on');
  assert.equal(link.counters.busyRejects, 6 - accepted);
  assert.equal(link.counters.backpressureWaits, 1, 'one wait for ring space, however many are queued');
  for (const o of orders.slice(accepted)) assert.ok(link.place(o, 1, true, false), 'forced past the bound');
  await until(() => seen.answered.length === 7, 'every placement');
  assert.deepEqual(seen.answered.slice(1).map((a) => a.id), orders.map((o) => o.handle), 'in the order they were sent');
  assert.ok(seen.answered.every((a) => a.code === MatchCode.OK));
});

test('a halt hands back every command still in flight, in order, and the drain stops', async () => {
  const { link, life, seen, p } = await start();
  const a = bid(p, 3000);
  const b = bid(p, 3100);
  link.place(a, 1, false, false);
  link.place(b, 1, false, false);
  life.halt(new Error('test halt'));
  const back = link.takeUnanswered();
  assert.deepEqual(back.map((inf) => inf.id), [a.handle, b.handle]);
  assert.deepEqual(link.takeUnanswered(), [], 'handed back once');
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(seen.answered.length, 1, 'only the registration was answered');
});

test('a shard that fails halts the engine with its error', async () => {
  const { link, life, p } = await start();
  const ghost = bid(p, 3000);
  ghost.market = { ...p.market, marketId: 77 };
  link.place(ghost, 1, false, false);
  await until(() => life.halted !== undefined, 'the halt');
  assert.match(life.halted!.message, /shard 0 failed: .*unknown market 77/);
});
