/**
 * The trading desk: market makers and takers over a set of markets, driven one round (`tick`) at a time
 * against a `Venue`. The living demo runs it in process (demo/engine-venue.ts: the trading route's order
 * checks, then Engine.placeOrder), tools/simulate.ts over HTTP (signed POST /orders); everything that
 * decides what to trade is here and in trading.ts, so both behave alike.
 *
 * A round at time `now` with an order budget:
 *   1. every market's fair price walks `now - last` forward;
 *   2. the desk reads back its tracked orders (fills since the last read, orders that left the book);
 *   3. wallets below their USDC floor are topped up through the venue's deposit (the admin path);
 *   4. takers send FAK orders through the fair price: what the makers do not need of the budget (at least
 *      `takerShare` of it);
 *   5. the desk reads back again, so makers see what the takers just hit;
 *   6. makers replace quotes that are missing, filled down or too far from where they want them, most
 *      urgent first, as far as the rest of the budget goes: the stale quotes are canceled first, then the
 *      new ones placed (a new quote never meets its own maker's old one).
 * Decisions are all made before the round's I/O, from a seeded random source, and a venue applies a
 * round's orders in the order given: in process the same seed and the same start give the same journal.
 *
 * Maintenance windows. A venue that tells its trading phase (the in-process one does) is traded as a bot on
 * the platform trades it: during a window the round sends nothing at all (orders and cancels would be
 * answered 425), only the fair prices move on; in the post-only period after it the takers wait and the
 * makers quote with postOnly (a quote that would cross is refused, not matched). A desk that opens during
 * a window cancels its wallets' old orders at its first round after it. The venue refuses what the sandbox
 * refuses whatever the desk does: the window stops matching for the demo's traders as for everyone.
 *
 * What the desk trades on and through what: venue.ts. Its own account of each wallet: accounts.ts.
 */
import type { OrderType } from '../edge/schemas/orders.ts';
import { acknowledgedFill, affordable, freeTokens, inventory, release, reserve, restingFill, type Account, type Funding, type Tracked } from './accounts.ts';
import type { OrderSigner, SigningWallet } from './order-signer.ts';
import {
  createRng,
  FairWalk,
  legFor,
  makerQuote,
  needsRequote,
  takerIntent,
  type FreeTokens,
  type Leg,
  type MakerParams,
  type Rng,
  type TakerParams,
  type WalkParams,
} from './trading.ts';
import type { DeskMarket, Venue } from './venue.ts';

export type { Funding } from './accounts.ts';
export type { DeskMarket, Holdings, OrderState, PlaceOutcome, Venue } from './venue.ts';

// ---- how the desk is set up, and what it reports ---------------------------------------------------------

export interface DeskOptions {
  seed: number;
  markets: readonly DeskMarket[];
  makers: readonly { wallet: SigningWallet; params: MakerParams }[];
  takers: readonly { wallet: SigningWallet; params: TakerParams }[];
  walk: WalkParams;
  /** Share of a round's budget kept for the takers when the makers want more; otherwise they get what the makers leave. */
  takerShare: number;
  makerFunding: Funding;
  takerFunding: Funding;
  signer: OrderSigner;
}

export interface DeskStats {
  /** Orders sent to the venue, and of those accepted. */
  orders: number;
  accepted: number;
  /** Refusals and failures by their message. */
  errors: Record<string, number>;
  canceled: number;
  /** Distinct trades the desk's wallets took part in. */
  trades: number;
  /** Tokens and USDC of the fills where a desk order was the taker (fees included). */
  takerVolumeUnits: number;
  takerVolumeUsdc: number;
  /** USDC deposited by the desk (start and top-ups). */
  depositedUnits: number;
  /** Mean of the desk's best ask minus best bid over markets quoted on both sides, sampled each round (pips). */
  meanSpreadPips: number;
}

// ---- internal state -------------------------------------------------------------------------------------

interface MakerState {
  acct: Account;
  params: MakerParams;
  /** Per market: its resting quotes. */
  quotes: Array<{ bid?: Tracked; ask?: Tracked }>;
}

interface Need {
  maker: number;
  /** Market index. */
  k: number;
  side: 'bid' | 'ask';
  /** The price wanted (outcome 0); undefined: the side is dropped. */
  want?: number;
  size: number;
  /** The resting quote it replaces. */
  stale?: Tracked;
  urgency: number;
}

interface Planned {
  acct: Account;
  market: DeskMarket;
  leg: Leg;
  orderType: OrderType;
  quote?: Tracked['quote'];
  /** A maker's quote in a post-only period. */
  postOnly?: boolean;
}

export class Desk {
  private readonly rng: Rng;
  private readonly fairs: FairWalk[];
  private readonly accounts: Account[] = [];
  private readonly makers: MakerState[];
  private readonly takers: { acct: Account; params: TakerParams }[];
  private readonly tracked = new Map<string, Tracked>();
  private readonly trades = new Set<string>();
  private last = 0;
  /** open() ran during a maintenance window: the wallets' old orders are canceled at the first round after it. */
  private cancelPending = false;
  private salt = 0;
  private spreadSum = 0;
  private spreadSamples = 0;
  private readonly s = { orders: 0, accepted: 0, errors: {} as Record<string, number>, canceled: 0, takerVolumeUnits: 0, takerVolumeUsdc: 0, depositedUnits: 0 };

  constructor(
    private readonly venue: Venue,
    private readonly o: DeskOptions,
  ) {
    this.rng = createRng(o.seed);
    // Each market walks on its own stream, so adding a trader does not change the prices.
    this.fairs = o.markets.map((m, i) => new FairWalk(m.fairPips, o.walk, createRng(o.seed * 7919 + i + 1)));
    const account = (wallet: SigningWallet, funding: Funding): Account => {
      const a: Account = { wallet, funding, usdc: 0, tokens: new Map(), reservedUsdc: 0, reservedTokens: new Map() };
      this.accounts.push(a);
      return a;
    };
    this.makers = o.makers.map((m) => ({ acct: account(m.wallet, o.makerFunding), params: m.params, quotes: o.markets.map(() => ({})) }));
    this.takers = o.takers.map((t) => ({ acct: account(t.wallet, o.takerFunding), params: t.params }));
    // Salts continue from a seeded point, so two desks with different seeds never sign the same order.
    this.salt = (o.seed >>> 0) * 1_000_000;
  }

  /** Starts from a clean slate: cancels the wallets' open orders, reads their holdings, funds them. */
  async open(now: number): Promise<void> {
    this.last = now;
    if (this.phase() === 'maintenance') this.cancelPending = true;
    else await Promise.all(this.accounts.map((a) => this.venue.cancelAll(a.wallet)));
    const held = await Promise.all(this.accounts.map((a) => this.venue.holdings(a.wallet)));
    held.forEach((h, i) => {
      const a = this.accounts[i]!;
      a.usdc = h.usdc;
      a.tokens = new Map(h.tokens);
    });
    await this.topUp(true);
  }

  /** New walk parameters for every market, anchored where its price is now. */
  retune(walk: WalkParams): void {
    for (const f of this.fairs) f.retune(walk);
  }

  fairPips(market: number): number {
    return this.fairs[market]!.pips;
  }

  /** One round (module header). `budget`: orders it may send (Infinity: an opening round, every quote it wants and no taker). */
  async tick(now: number, budget: number): Promise<void> {
    const dt = now - this.last;
    this.last = now;
    for (const f of this.fairs) f.step(dt);
    const phase = this.phase();
    // The engine is down: anything sent would be answered 425 (module header).
    if (phase === 'maintenance') return;
    if (this.cancelPending) {
      this.cancelPending = false;
      await Promise.all(this.accounts.map((a) => this.venue.cancelAll(a.wallet)));
    }
    await this.sync();
    await this.topUp(false);
    // The takers get what the makers do not need, and at least `takerShare` of the budget; in an opening
    // round (no budget) the makers put up their quotes first and the takers wait for them. In a post-only
    // period the takers wait.
    const postOnly = phase === 'post-only';
    const wanted = this.makerNeeds().filter((nd) => nd.want !== undefined).length;
    const forTakers = Number.isFinite(budget) && !postOnly ? budget - Math.min(wanted, Math.floor(budget * (1 - this.o.takerShare))) : 0;
    const taken = await this.take(now, forTakers);
    await this.sync();
    await this.quote(now, budget - taken, postOnly);
    this.sampleSpread();
  }

  private phase(): 'open' | 'maintenance' | 'post-only' {
    return this.venue.phase?.() ?? 'open';
  }

  /** Cancels every open order of the desk's wallets and reads back their last fills. */
  async close(): Promise<void> {
    await Promise.all(this.accounts.map((a) => this.venue.cancelAll(a.wallet)));
    await this.sync();
  }

  get stats(): DeskStats {
    return { ...this.s, errors: { ...this.s.errors }, trades: this.trades.size, meanSpreadPips: this.spreadSamples === 0 ? 0 : this.spreadSum / this.spreadSamples };
  }

  /** The desk's own account of each wallet (tools/simulate.ts checks it against the service). */
  holdings(): Array<{ address: string; usdc: number; tokens: Map<string, number> }> {
    return this.accounts.map((a) => ({ address: a.wallet.address, usdc: a.usdc, tokens: new Map(a.tokens) }));
  }

  /** Ids of the trades the desk's wallets took part in. */
  tradeIds(): ReadonlySet<string> {
    return this.trades;
  }

  // ---- reading back -----------------------------------------------------------------------------------

  /** Reads back every tracked order. */
  private sync(): Promise<void> {
    return this.readBack([...this.tracked.values()]);
  }

  /** Books the fills of `list` since their last read and forgets those that left the book. */
  private async readBack(list: readonly Tracked[]): Promise<void> {
    if (list.length === 0) return;
    const byAcct = new Map<Account, Tracked[]>();
    for (const t of list) {
      const ts = byAcct.get(t.acct);
      if (ts) ts.push(t);
      else byAcct.set(t.acct, [t]);
    }
    const accts = [...byAcct.keys()];
    const states = await Promise.all(accts.map((a) => this.venue.orderStates(a.wallet, byAcct.get(a)!.map((t) => t.id))));
    accts.forEach((a, i) => {
      for (const t of byAcct.get(a)!) {
        const st = states[i]!.get(t.id);
        if (st === undefined) {
          // Unknown to the venue (it never took it): nothing of it happened.
          this.untrack(t);
          continue;
        }
        for (const tid of st.tradeIds) this.trades.add(tid);
        const delta = st.sizeMatched - t.matched;
        if (delta > 0) restingFill(t, delta);
        if (st.status !== 'LIVE') this.untrack(t);
      }
    });
  }

  private untrack(t: Tracked): void {
    release(t);
    this.tracked.delete(t.id);
    this.unquote(t);
  }

  /** Takes `t` out of its maker's quote slot (it stays tracked until read back). */
  private unquote(t: Tracked): void {
    if (!t.quote) return;
    const q = this.makers[t.quote.maker]!.quotes[t.quote.market]!;
    if (q[t.quote.side] === t) q[t.quote.side] = undefined;
  }

  // ---- funding ------------------------------------------------------------------------------------------

  private async topUp(start: boolean): Promise<void> {
    const due = this.accounts.filter((a) => a.usdc < (start ? a.funding.targetUnits : a.funding.floorUnits));
    await Promise.all(
      due.map(async (a) => {
        const units = a.funding.targetUnits - a.usdc;
        await this.venue.deposit(a.wallet, units);
        a.usdc += units;
        this.s.depositedUnits += units;
      }),
    );
  }

  // ---- takers ------------------------------------------------------------------------------------------

  /** Up to `count` taker orders (a fraction is a chance of one more). */
  private async take(now: number, count: number): Promise<number> {
    if (this.takers.length === 0 || this.o.markets.length === 0 || count <= 0) return 0;
    let n = Math.floor(count) + (this.rng.chance(count - Math.floor(count)) ? 1 : 0);
    const plan: Planned[] = [];
    const spent = new Map<Account, number>();
    while (n-- > 0) {
      const t = this.takers[this.rng.int(this.takers.length)]!;
      const k = this.rng.int(this.o.markets.length);
      const m = this.o.markets[k]!;
      const f = this.fairs[k]!;
      const intent = takerIntent(t.params, this.rng, f.pips, f.trendPips, inventory(t.acct, m), m);
      if (!intent) continue;
      const leg = legFor(intent.buy, intent.limitPips, intent.sizeUnits, freeTokens(t.acct, m));
      if (!affordable(t.acct, leg, spent)) continue;
      plan.push({ acct: t.acct, market: m, leg, orderType: 'FAK' });
    }
    await this.send(now, plan);
    return plan.length;
  }

  // ---- makers ------------------------------------------------------------------------------------------

  /** What the makers want changed: missing quotes, quotes filled down or off their price, sides to drop. */
  private makerNeeds(): Need[] {
    const needs: Need[] = [];
    this.makers.forEach((mk, mi) => {
      this.o.markets.forEach((m, k) => {
        const q = makerQuote(this.fairs[k]!.pips, inventory(mk.acct, m), mk.params, m);
        for (const side of ['bid', 'ask'] as const) {
          const resting = mk.quotes[k]![side];
          const want = q[side];
          if (resting === undefined) {
            if (want !== undefined) needs.push({ maker: mi, k, side, want, size: q.sizeUnits, urgency: Infinity });
            continue;
          }
          if (want === undefined) {
            needs.push({ maker: mi, k, side, size: 0, stale: resting, urgency: 0 });
            continue;
          }
          const filledDown = resting.leg.sizeUnits - resting.matched < resting.leg.sizeUnits / 2;
          if (filledDown || needsRequote(resting.quote!.yesPips, want, mk.params, m)) {
            const off = Math.abs(resting.quote!.yesPips - want) / Math.max(m.tickPips, mk.params.requotePips);
            needs.push({ maker: mi, k, side, want, size: q.sizeUnits, stale: resting, urgency: filledDown ? 1e6 : off });
          }
        }
      });
    });
    return needs;
  }

  private async quote(now: number, budget: number, postOnly = false): Promise<void> {
    const needs = this.makerNeeds();
    // Most urgent first; ties keep the order above (maker, market, side), so the choice is deterministic.
    const order = needs.map((_, i) => i).sort((a, b) => needs[b]!.urgency - needs[a]!.urgency || a - b);
    let left = Math.floor(budget);
    const chosen: Need[] = [];
    for (const i of order) {
      const nd = needs[i]!;
      if (nd.want === undefined) chosen.push(nd);
      else if (left > 0) {
        chosen.push(nd);
        left--;
      }
    }
    const stale = chosen.filter((nd) => nd.stale !== undefined).map((nd) => nd.stale!);
    if (stale.length > 0) {
      const byAcct = new Map<Account, string[]>();
      for (const t of stale) byAcct.set(t.acct, [...(byAcct.get(t.acct) ?? []), t.id]);
      await this.venue.cancel([...byAcct].map(([a, ids]) => ({ wallet: a.wallet, orderIds: ids })));
      this.s.canceled += stale.length;
      for (const t of stale) this.unquote(t);
      // What a quote matched before its cancel still counts, and what it reserved is free again.
      await this.readBack(stale);
    }
    const plan: Planned[] = [];
    const spent = new Map<Account, number>();
    const promised = new Map<Account, FreeTokens>();
    for (const nd of chosen) {
      if (nd.want === undefined) continue;
      const mk = this.makers[nd.maker]!;
      const m = this.o.markets[nd.k]!;
      const free = freeTokens(mk.acct, m, promised.get(mk.acct));
      const leg = legFor(nd.side === 'bid', nd.want, nd.size, free);
      if (leg.side === 'SELL') {
        const p = promised.get(mk.acct) ?? { yes: 0, no: 0 };
        if (leg.outcome === 0) p.yes += leg.sizeUnits;
        else p.no += leg.sizeUnits;
        promised.set(mk.acct, p);
      } else if (!affordable(mk.acct, leg, spent)) continue;
      plan.push({ acct: mk.acct, market: m, leg, orderType: 'GTC', quote: { maker: nd.maker, market: nd.k, side: nd.side, yesPips: nd.want }, postOnly });
    }
    await this.send(now, plan);
  }

  // ---- sending ------------------------------------------------------------------------------------------

  private async send(now: number, plan: Planned[]): Promise<void> {
    if (plan.length === 0) return;
    const signed = plan.map((p) =>
      this.o.signer.sign(p.acct.wallet, {
        tokenId: p.market.tokenIds[p.leg.outcome]!,
        negRisk: p.market.negRisk,
        leg: p.leg,
        orderType: p.orderType,
        salt: ++this.salt,
        timestampMs: now,
        postOnly: p.postOnly,
      }),
    );
    this.s.orders += plan.length;
    const outcomes = await this.venue.place(plan.map((p, i) => ({ wallet: p.acct.wallet, order: signed[i]! })));
    outcomes.forEach((r, i) => {
      const p = plan[i]!;
      if (!r.ok) {
        // Messages that name the order are one class whatever the order.
        const cls = r.error.replace(/0x[0-9a-fA-F]{64}/g, '<id>');
        this.s.errors[cls] = (this.s.errors[cls] ?? 0) + 1;
        return;
      }
      this.s.accepted++;
      for (const tid of r.tradeIds) this.trades.add(tid);
      const a = p.acct;
      const tokenId = p.market.tokenIds[p.leg.outcome]!;
      // The acknowledgement's amounts are the order's immediate fills (as taker), fees included.
      const ack = acknowledgedFill(a, tokenId, p.leg.side, r.makingAmount, r.takingAmount);
      const filled = ack.units;
      this.s.takerVolumeUsdc += ack.usdc;
      this.s.takerVolumeUnits += filled;
      if (r.status !== 'live') return;
      const t: Tracked = { id: r.orderId, acct: a, market: p.market, tokenId, leg: p.leg, matched: filled, quote: p.quote };
      this.tracked.set(t.id, t);
      reserve(t);
      if (p.quote) this.makers[p.quote.maker]!.quotes[p.quote.market]![p.quote.side] = t;
    });
  }

  private sampleSpread(): void {
    this.o.markets.forEach((_, k) => {
      let bid = -1;
      let ask = Infinity;
      for (const mk of this.makers) {
        const q = mk.quotes[k]!;
        if (q.bid?.quote) bid = Math.max(bid, q.bid.quote.yesPips);
        if (q.ask?.quote) ask = Math.min(ask, q.ask.quote.yesPips);
      }
      if (bid >= 0 && ask < Infinity) {
        this.spreadSum += ask - bid;
        this.spreadSamples++;
      }
    });
  }
}
