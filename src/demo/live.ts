/**
 * The living demo (`demo: "live"`, the default): on a fresh store, a week of trading replayed through the
 * real order path under a simulated clock before the listener opens; then, while the service runs, the
 * demo's makers keep quoting every demo market and a few takers trade, a few orders per second in total.
 *
 * Who trades: six demo trader wallets (three makers, three takers), keys derived from public strings like
 * the five demo wallets of catalog.ts (TEST KEYS ONLY, README lists them). The five demo wallets stay the
 * user's: a bot trading one of them never meets its own orders from the demo, and its balance is its own.
 * Each trader gets an API key from the API-key service (as POST /auth/api-key would create it) and signs
 * its orders (order-signer.ts); the orders go through the trading route's checks and Engine.placeOrder
 * (engine-venue.ts). Funding is the admin deposit path (Engine.deposit), at the start and whenever a
 * wallet runs low.
 *
 * The week of history. `ReplayClock` is the app's clock in live mode: it follows its base clock, except
 * while the demo holds it. On a fresh store the app holds it a week back before loading the catalog (so the
 * catalog, the deposits and the API keys date from then); the replay then moves it forward in steps (30
 * minutes by default), running one desk round per step and waiting for its journal commits before the next
 * step, so every fill, order and status event is journaled at its step's time and the price history gets
 * its samples across the week (trade prices from the fills, midpoints from the book publications). Then
 * the clock follows real time again and the live rounds run on a timer. Deterministic under the seed for
 * a given start time: the decisions come from the seed, the venue applies each round's orders in order.
 *
 * Sizes: ~4,000 orders over 336 steps by default, chosen so that `npm start` on an empty store answers
 * within the start-up budget of 15 s on a two-core machine (docs/decisions/sandbox.md, "The living demo").
 */
import { keccak256 } from 'ox/Hash';
import { fromString } from 'ox/Hex';
import { privateKeyToAccount } from 'viem/accounts';
import { UNITS } from '../domain/units.ts';
import type { Funders } from '../edge/auth/funders.ts';
import { orderCheckDeps } from '../edge/auth/order-check.ts';
import type { ApiKeyService } from '../edge/auth/api-keys.ts';
import type { OrderDomains } from '../edge/auth/eip712.ts';
import type { SigPool } from '../edge/auth/sig-pool.ts';
import type { Engine } from '../engine/engine.ts';
import type { CatalogReader } from '../queries/catalog.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Logger } from '../runtime/log.ts';
import { demoQuestionId } from './catalog.ts';
import { Desk, type DeskMarket, type DeskOptions } from './desk.ts';
import { EngineVenue, type VenueSandbox } from './engine-venue.ts';
import { OrderSigner, type SigningWallet } from './order-signer.ts';
import { HISTORY_WALK, LIVE_WALK, MAKER_PRESETS, TAKER_PRESETS } from './trading.ts';

const DAY_MS = 86_400_000;
/** The most time one live round trades for, in rounds. */
const MAX_ROUND_TICKS = 4;

// ---- the clock ------------------------------------------------------------------------------------------

/** The app's clock in live demo mode: its base clock, or the time the demo holds it at. */
export class ReplayClock implements Clock {
  private held: number | undefined;

  constructor(readonly base: Clock) {}

  now(): number {
    return this.held ?? this.base.now();
  }

  hold(ms: number): void {
    this.held = ms;
  }

  follow(): void {
    this.held = undefined;
  }

  get holding(): boolean {
    return this.held !== undefined;
  }
}

// ---- the traders ----------------------------------------------------------------------------------------

export interface DemoTrader {
  /** TEST ONLY: derived from a public string. */
  privateKey: `0x${string}`;
  address: string;
  role: 'maker' | 'taker';
}

/** Six trader wallets, private key = keccak256("pm-exchange demo trader <i>"): makers 1-3, takers 4-6. */
export const DEMO_TRADERS: readonly DemoTrader[] = [1, 2, 3, 4, 5, 6].map((i) => {
  const privateKey = keccak256(fromString(`pm-exchange demo trader ${i}`));
  return { privateKey, address: privateKeyToAccount(privateKey).address.toLowerCase(), role: i <= 3 ? 'maker' : 'taker' };
});

export interface LiveDemoOptions {
  seed: number;
  /** Orders per second of the live traders, all markets together. */
  ordersPerSecond: number;
  /** Period of the live rounds. */
  tickMs: number;
  /** How far back the replayed history starts. */
  replayMs: number;
  replayStepMs: number;
  /** Orders of the whole replay (the opening quotes come on top). */
  replayOrders: number;
}

export const LIVE_DEMO_DEFAULTS: Readonly<LiveDemoOptions> = Object.freeze({
  seed: 1,
  ordersPerSecond: 4,
  tickMs: 500,
  replayMs: 7 * DAY_MS,
  replayStepMs: 30 * 60_000,
  replayOrders: 4_000,
});

export interface LiveDemoDeps {
  engine: Engine;
  /** The order routes' sandbox rules (maintenance windows, post-only periods): the traders meet them too. */
  sandbox: VenueSandbox;
  auth: { keys: ApiKeyService; pool: SigPool; orderDomains: OrderDomains; funders: Funders };
  catalog: CatalogReader;
  clock: ReplayClock;
  log: Logger;
}

export interface LiveDemo {
  readonly desk: Desk;
  /** What the replay did (undefined on a store that already had its history). */
  readonly replay?: { steps: number; orders: number; trades: number; ms: number };
  /** Stops the live rounds; resolves once the round in flight has finished. */
  stop(): Promise<void>;
}

/**
 * Starts the demo traders. With the clock held (a fresh store, app.ts), replays the history from the held
 * time up to now first; then runs the live rounds until stop().
 */
export async function startLiveDemo(deps: LiveDemoDeps, options: Partial<LiveDemoOptions> = {}): Promise<LiveDemo> {
  const o: LiveDemoOptions = { ...LIVE_DEMO_DEFAULTS, ...options };
  const { engine, clock, log } = deps;
  const markets = demoMarkets(deps);
  const wallets = await traderWallets(deps.auth.keys);
  const signer = new OrderSigner(deps.auth.orderDomains);
  const desk = new Desk(new EngineVenue(engine, orderCheckDeps({ auth: deps.auth, clock, engine }), deps.sandbox), deskOptions(o.seed, markets, wallets, signer));

  if (markets.length === 0) {
    // A store whose catalog an admin filled before the demo ever ran: nothing of the demo's to trade.
    clock.follow();
    log.info('no demo markets: the demo traders stay idle');
    return { desk, stop: async () => undefined };
  }

  let replay: LiveDemo['replay'];
  if (clock.holding) {
    const t0 = performance.now();
    const start = clock.now();
    const end = clock.base.now();
    const steps = Math.max(1, Math.floor((end - start) / o.replayStepMs));
    const perStep = o.replayOrders / steps;
    await desk.open(start);
    for (let i = 1; i <= steps; i++) {
      const t = start + i * o.replayStepMs;
      clock.hold(t);
      // The first round puts up every opening quote; later ones share the replay's budget.
      await desk.tick(t, i === 1 ? Infinity : perStep);
    }
    clock.follow();
    const s = desk.stats;
    replay = { steps, orders: s.orders, trades: s.trades, ms: Math.round(performance.now() - t0) };
    log.info({ ...replay, markets: markets.length, errors: s.errors }, 'demo history replayed');
  } else {
    await desk.open(clock.now());
  }

  desk.retune(LIVE_WALK);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();
  let last = clock.now();
  let carry = 0;
  // A store that kept its history starts with empty demo books: the first round quotes every market.
  let first = replay === undefined;
  const run = () => {
    timer = undefined;
    if (stopped) return;
    const now = clock.now();
    // A round trades for the time since the last one, but never for more than a few rounds' worth: the
    // sandbox's test clock may have jumped a day since (and, frozen, gives it no time at all).
    const elapsed = Math.min(now - last, MAX_ROUND_TICKS * o.tickMs);
    const budget = first ? Infinity : (elapsed / 1000) * o.ordersPerSecond + carry;
    first = false;
    last = now;
    const whole = Number.isFinite(budget) ? Math.floor(budget) : budget;
    carry = Number.isFinite(budget) ? budget - whole : 0;
    round = desk.tick(now, whole).then(
      () => schedule(),
      (err: unknown) => {
        // A round that failed (the engine stopping, a signature thread gone) is logged; the next one tries again.
        log.error({ err }, 'demo round failed');
        schedule();
      },
    );
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(run, o.tickMs);
    timer.unref();
  };
  schedule();
  log.info({ traders: wallets.length, markets: markets.length, ordersPerSecond: o.ordersPerSecond }, 'demo traders running');

  return {
    desk,
    replay,
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      await round;
    },
  };
}

/**
 * Every demo market that takes orders (not the markets an admin added: the demo leaves those alone), its
 * fair price starting at its last trade, else the catalog's price.
 */
function demoMarkets(deps: LiveDemoDeps): DeskMarket[] {
  const out: DeskMarket[] = [];
  for (const m of deps.catalog.tradingMarkets()) {
    if (!m.acceptingOrders || deps.engine.market(m.conditionId) === undefined) continue;
    const rec = deps.catalog.marketByCondition(m.conditionId);
    if (rec === undefined || rec.questionID.toLowerCase() !== demoQuestionId(rec.slug)) continue;
    const seeded = Number(rec.outcomePrices[0] ?? '0.5');
    const last = deps.engine.lastTradePrice(m.tokenIds[0]);
    const fairPips = last?.pricePips ?? Math.round((Number.isFinite(seeded) ? seeded : 0.5) * 10_000);
    out.push({ conditionId: m.conditionId, tokenIds: m.tokenIds, tickPips: m.tickPips, minSizeUnits: m.minSizeUnits, negRisk: m.negRisk, makerFeeBps: m.makerFeeBps, fairPips });
  }
  return out;
}

/** The traders' wallets with a usable API key each: the first one they have, else a new one. */
async function traderWallets(keys: ApiKeyService): Promise<(SigningWallet & { role: DemoTrader['role'] })[]> {
  const out: (SigningWallet & { role: DemoTrader['role'] })[] = [];
  for (const t of DEMO_TRADERS) {
    let apiKey = keys.list(t.address)[0];
    // A nonce once used stays taken (even revoked): the first free one.
    for (let nonce = 0; apiKey === undefined; nonce++) {
      try {
        apiKey = (await keys.create(t.address, String(nonce))).apiKey;
      } catch (e) {
        if (nonce >= 100) throw e;
      }
    }
    out.push({ privateKey: t.privateKey, address: t.address, apiKey, role: t.role });
  }
  return out;
}

function deskOptions(seed: number, markets: DeskMarket[], wallets: (SigningWallet & { role: DemoTrader['role'] })[], signer: OrderSigner): DeskOptions {
  const makers = wallets.filter((w) => w.role === 'maker');
  const takers = wallets.filter((w) => w.role === 'taker');
  return {
    seed,
    markets,
    makers: makers.map((wallet, i) => ({ wallet, params: MAKER_PRESETS[i % MAKER_PRESETS.length]! })),
    takers: takers.map((wallet, i) => ({ wallet, params: TAKER_PRESETS[i % TAKER_PRESETS.length]! })),
    walk: HISTORY_WALK,
    takerShare: 0.35,
    makerFunding: { targetUnits: 200_000 * UNITS, floorUnits: 50_000 * UNITS },
    takerFunding: { targetUnits: 25_000 * UNITS, floorUnits: 5_000 * UNITS },
    signer,
  };
}
