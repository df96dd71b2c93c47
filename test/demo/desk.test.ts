/**
 * The trading desk (src/demo/desk.ts) against a recording venue: what a round sends and in what order,
 * the budget, the funding, the accounting of fills, and determinism under a seed. The same desk against
 * the real engine is test/demo/live.test.ts; over HTTP, test/tools/simulate.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { Desk, type DeskMarket, type Holdings, type OrderState, type PlaceOutcome, type Venue } from '../../src/demo/desk.ts';
import { OrderSigner, type SignedOrder, type SigningWallet } from '../../src/demo/order-signer.ts';
import { LIVE_WALK, MAKER_PRESETS, TAKER_PRESETS } from '../../src/demo/trading.ts';
import { orderDomainsOf } from '../../src/edge/auth/order-check.ts';
import { testConfig } from '../../src/runtime/config.ts';

const UNITS = 1_000_000;

type Call =
  | { kind: 'place'; wallet: string; order: SignedOrder }
  | { kind: 'cancel'; wallet: string; ids: readonly string[] }
  | { kind: 'cancelAll'; wallet: string }
  | { kind: 'deposit'; wallet: string; units: number };

/** Takes every order as resting; fills are what the test writes into `states`. */
class RecordingVenue implements Venue {
  readonly calls: Call[] = [];
  readonly states = new Map<string, OrderState>();
  held = new Map<string, Holdings>();

  async place(items: readonly { wallet: SigningWallet; order: SignedOrder }[]): Promise<PlaceOutcome[]> {
    return items.map((it) => {
      this.calls.push({ kind: 'place', wallet: it.wallet.address, order: it.order });
      this.states.set(it.order.orderId, { status: 'LIVE', sizeMatched: 0, tradeIds: [] });
      return { ok: true, orderId: it.order.orderId, status: 'live', makingAmount: 0, takingAmount: 0, tradeIds: [] };
    });
  }
  async cancel(items: readonly { wallet: SigningWallet; orderIds: readonly string[] }[]): Promise<void> {
    for (const it of items) {
      this.calls.push({ kind: 'cancel', wallet: it.wallet.address, ids: it.orderIds });
      for (const id of it.orderIds) {
        const s = this.states.get(id);
        if (s?.status === 'LIVE') this.states.set(id, { ...s, status: 'CANCELED' });
      }
    }
  }
  async cancelAll(wallet: SigningWallet): Promise<void> {
    this.calls.push({ kind: 'cancelAll', wallet: wallet.address });
  }
  async orderStates(_w: SigningWallet, ids: readonly string[]): Promise<Map<string, OrderState>> {
    return new Map(ids.filter((id) => this.states.has(id)).map((id) => [id, this.states.get(id)!]));
  }
  async holdings(wallet: SigningWallet): Promise<Holdings> {
    return this.held.get(wallet.address) ?? { usdc: 0, tokens: new Map() };
  }
  async deposit(wallet: SigningWallet, units: number): Promise<void> {
    this.calls.push({ kind: 'deposit', wallet: wallet.address, units });
  }
  placed(): { wallet: string; order: SignedOrder }[] {
    return this.calls.filter((c) => c.kind === 'place') as { wallet: string; order: SignedOrder }[];
  }
}

const wallet = (i: number): SigningWallet => {
  const privateKey = keccak256(toHex(`pm-exchange desk test ${i}`));
  return { privateKey, address: privateKeyToAccount(privateKey).address.toLowerCase(), apiKey: `key-${i}` };
};
const WALLETS = [0, 1, 2, 3].map(wallet);
const MARKETS: DeskMarket[] = [0, 1, 2].map((k) => ({
  conditionId: `0x${String(k + 1).repeat(64)}`,
  tokenIds: [`${100 + 2 * k}`, `${101 + 2 * k}`] as const,
  tickPips: 100,
  minSizeUnits: 5 * UNITS,
  negRisk: k === 2,
  makerFeeBps: 0,
  fairPips: 3_000 + 2_000 * k,
}));

function desk(venue: Venue, seed = 1): Desk {
  return new Desk(venue, {
    seed,
    markets: MARKETS,
    makers: [0, 1].map((i) => ({ wallet: WALLETS[i]!, params: MAKER_PRESETS[i]! })),
    takers: [2, 3].map((i) => ({ wallet: WALLETS[i]!, params: TAKER_PRESETS[i - 2]! })),
    walk: LIVE_WALK,
    takerShare: 0.35,
    makerFunding: { targetUnits: 1_000 * UNITS, floorUnits: 200 * UNITS },
    takerFunding: { targetUnits: 500 * UNITS, floorUnits: 100 * UNITS },
    signer: new OrderSigner(orderDomainsOf(testConfig().auth)),
  });
}

test('open cancels what the wallets had open and funds them up to their targets', async () => {
  const v = new RecordingVenue();
  v.held.set(WALLETS[0]!.address, { usdc: 300 * UNITS, tokens: new Map() });
  v.held.set(WALLETS[3]!.address, { usdc: 800 * UNITS, tokens: new Map() });
  const d = desk(v);
  await d.open(1_000);
  assert.deepEqual(v.calls.filter((c) => c.kind === 'cancelAll').map((c) => c.wallet).sort(), WALLETS.map((w) => w.address).sort());
  const deposits = Object.fromEntries(v.calls.filter((c) => c.kind === 'deposit').map((c) => [c.wallet, (c as { units: number }).units]));
  assert.deepEqual(deposits, { [WALLETS[0]!.address]: 700 * UNITS, [WALLETS[1]!.address]: 1_000 * UNITS, [WALLETS[2]!.address]: 500 * UNITS });
  assert.equal(d.stats.depositedUnits, 2_200 * UNITS);
});

test('the opening round quotes both sides of every market for every maker, signed by the maker', async () => {
  const v = new RecordingVenue();
  const d = desk(v);
  await d.open(1_000);
  await d.tick(1_500, Infinity);
  const quotes = v.placed().filter((p) => p.order.submission.orderType === 'GTC');
  assert.equal(quotes.length, 2 * MARKETS.length * 2);
  for (const [i, w] of [WALLETS[0]!, WALLETS[1]!].entries()) {
    const mine = quotes.filter((q) => q.wallet === w.address);
    assert.equal(mine.length, 2 * MARKETS.length, `maker ${i}`);
    for (const q of mine) {
      assert.equal(q.order.submission.owner, w.apiKey);
      assert.equal(q.order.submission.order.maker, w.address);
    }
    for (const m of MARKETS) {
      // Without tokens a maker bids by buying Yes and offers by buying No.
      const sides = mine.filter((q) => m.tokenIds.includes(q.order.submission.order.tokenId)).map((q) => `${m.tokenIds.indexOf(q.order.submission.order.tokenId)}${q.order.submission.order.side}`);
      assert.deepEqual(sides.sort(), ['0BUY', '1BUY']);
    }
  }
  assert.equal(v.placed().length, quotes.length, 'the takers wait for the quotes');
  // Later rounds: takers send FAK orders only.
  for (let t = 2; t < 30; t++) await d.tick(t * 1_000, 6);
  const taken = v.placed().filter((x) => x.wallet === WALLETS[2]!.address || x.wallet === WALLETS[3]!.address);
  assert.ok(taken.length > 0);
  for (const p of taken) assert.equal(p.order.submission.orderType, 'FAK');
});

test('a round never sends more orders than its budget, and cancels stale quotes before placing new ones', async () => {
  const v = new RecordingVenue();
  const d = desk(v);
  await d.open(0);
  await d.tick(500, Infinity);
  let t = 500;
  for (let round = 0; round < 60; round++) {
    const before = v.calls.length;
    t += 30_000; // the fair prices move far enough for requotes
    await d.tick(t, 4);
    const calls = v.calls.slice(before);
    const places = calls.filter((c) => c.kind === 'place');
    assert.ok(places.length <= 4, `round ${round}: ${places.length} orders`);
    const lastCancel = calls.map((c) => c.kind).lastIndexOf('cancel');
    const firstQuote = calls.findIndex((c) => c.kind === 'place' && c.order.submission.orderType === 'GTC');
    if (lastCancel >= 0 && firstQuote >= 0) assert.ok(lastCancel < firstQuote, `round ${round}: cancels first`);
  }
  assert.ok(d.stats.canceled > 0, 'quotes were replaced');
});

test('fills are booked at the order\'s price and the filled side is quoted again', async () => {
  const v = new RecordingVenue();
  const d = desk(v);
  await d.open(0);
  await d.tick(1, Infinity);
  const m = MARKETS[0]!;
  const bid = v.placed().find((p) => p.wallet === WALLETS[0]!.address && p.order.submission.order.tokenId === m.tokenIds[0])!;
  const size = Number(bid.order.submission.order.takerAmount);
  const usdc = Number(bid.order.submission.order.makerAmount);
  v.states.set(bid.order.orderId, { status: 'MATCHED', sizeMatched: size, tradeIds: ['0xt1'] });
  const before = v.placed().length;
  await d.tick(2, Infinity);
  const book = d.holdings().find((h) => h.address === WALLETS[0]!.address)!;
  assert.equal(book.tokens.get(m.tokenIds[0]), size);
  assert.equal(book.usdc, 1_000 * UNITS - usdc);
  assert.equal(d.stats.trades, 1);
  // The filled bid is replaced by a new bid (buying Yes: the maker holds no No to sell). If the lean moved
  // the offer by a tick, the new offer sells the Yes just bought instead of buying No.
  const again = v.placed().slice(before).filter((p) => p.wallet === WALLETS[0]!.address && m.tokenIds.includes(p.order.submission.order.tokenId));
  const kinds = again.map((p) => `${m.tokenIds.indexOf(p.order.submission.order.tokenId)}${p.order.submission.order.side}`);
  assert.ok(kinds.includes('0BUY'), kinds.join());
  for (const p of again.filter((x) => x.order.submission.order.side === 'SELL')) {
    assert.equal(p.order.submission.order.tokenId, m.tokenIds[0]);
    assert.ok(Number(p.order.submission.order.makerAmount) <= size);
  }
});

test('the same seed sends the same orders; another seed does not', async () => {
  const run = async (seed: number) => {
    const v = new RecordingVenue();
    const d = desk(v, seed);
    await d.open(0);
    for (let t = 1; t <= 40; t++) await d.tick(t * 10_000, t === 1 ? Infinity : 5);
    return v.calls.map((c) => (c.kind === 'place' ? `${c.wallet} ${c.order.orderId} ${c.order.submission.order.signature}` : `${c.kind} ${c.wallet}`));
  };
  const a = await run(3);
  assert.deepEqual(await run(3), a);
  assert.notDeepEqual(await run(4), a);
});

test('a maintenance window: the round sends nothing, not even cancels; in the post-only period the takers wait and the makers quote post-only', async () => {
  let phase: 'open' | 'maintenance' | 'post-only' = 'maintenance';
  const v = new RecordingVenue();
  (v as Venue).phase = () => phase;
  const d = desk(v);
  await d.open(0);
  assert.deepEqual(v.calls.filter((c) => c.kind === 'cancelAll'), [], 'a desk opening during a window cancels nothing yet');
  const before = v.calls.length;
  for (let t = 1; t <= 10; t++) await d.tick(t * 30_000, 8);
  assert.deepEqual(v.calls.slice(before).filter((c) => c.kind !== 'deposit'), [], 'no order and no cancel during the window');

  phase = 'post-only';
  const from = v.calls.length;
  await d.tick(11 * 30_000, Infinity);
  for (let t = 12; t < 30; t++) await d.tick(t * 30_000, 8);
  const calls = v.calls.slice(from);
  assert.equal(calls.filter((c) => c.kind === 'cancelAll').length, WALLETS.length, "the old orders are canceled at the first round after the window");
  const placed = calls.filter((c) => c.kind === 'place') as { wallet: string; order: SignedOrder }[];
  assert.ok(placed.length > 0, 'the makers quote');
  for (const p of placed) {
    assert.ok([WALLETS[0]!.address, WALLETS[1]!.address].includes(p.wallet), 'only makers send orders');
    assert.deepEqual([p.order.submission.orderType, p.order.submission.postOnly], ['GTC', true]);
  }

  phase = 'open';
  const after = v.calls.length;
  for (let t = 30; t < 60; t++) await d.tick(t * 30_000, 8);
  const open = v.calls.slice(after).filter((c) => c.kind === 'place') as { wallet: string; order: SignedOrder }[];
  assert.ok(open.some((p) => p.order.submission.orderType === 'FAK'), 'the takers trade again');
  assert.ok(open.every((p) => p.order.submission.postOnly === undefined), 'quotes are plain again');
});
