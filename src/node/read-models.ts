/**
 * The read side a node wires to its engine's commits (app.ts's `projections` and `catalog` steps): the
 * projections that catch up with the journal and follow it, the committed books every book read and stream
 * serves, the catalog and market data over them, the samplers (midpoints, liquidity rewards) and the
 * catalog's link to the engine's market registry. On a replica the same read models follow the replica
 * engine; what only the engine's process does (sampling, the catalog's registrations) is skipped there.
 */
import type { Store } from '../journal/env.ts';
import { metaKeys } from '../journal/keys.ts';
import { CatalogWriter } from '../projections/catalog.ts';
import { CatalogReader } from '../queries/catalog.ts';
import { loadDemo } from '../demo/catalog.ts';
import type { ReplayClock } from '../demo/live.ts';
import { tokenOutcomeOf, type EngineSurface } from '../engine/engine.ts';
import type { RoleParts, SampleLog } from './roles.ts';
import { Projector, ViewStore, type ViewWrites } from '../projections/projector.ts';
import { buildProjections } from '../projections/registry.ts';
import { CommittedBooks } from '../projections/committed-books.ts';
import { MarketDataStore, MidpointSampler } from '../projections/market-data.ts';
import { MarketDataReader, type BookSource } from '../queries/market-data.ts';
import { RewardsSampler } from '../projections/rewards.ts';
import { bookMidpoint, rewardProgram } from '../domain/rewards.ts';
import type { AppContext, CatalogServices, EngineAdmin } from '../edge/context.ts';
import type { Config } from '../runtime/config.ts';
import type { Clock, Timers } from '../runtime/clock.ts';
import type { Logger } from '../runtime/log.ts';
import type { Closers } from './closers.ts';

/**
 * The read models: projections catch up with whatever the journal holds beyond their cursors, then follow
 * every later commit.
 */
export function openProjections(o: { store: Store; engine: EngineSurface; viewWrites: ViewWrites; log: Logger }) {
  const { store, engine, viewWrites, log } = o;
  const views = new ViewStore(store.views, viewWrites);
  const prices = new ViewStore(store.prices, viewWrites);
  const marketDataStore = new MarketDataStore(store, viewWrites);
  const projector = new Projector(store, buildProjections({ store, views, prices, marketData: marketDataStore }), log, viewWrites);
  projector.catchUp();
  engine.onCommitted(projector.onCommitted);
  return { views, prices, marketDataStore };
}

/**
 * The books as committed: GET /book, the quotes and the streams read this one state (docs/decisions/streaming.md,
 * "Streaming"), so a client applying the stream's deltas lands on what /book serves. With them the catalog
 * and market data, which read each other's prices and outcomes.
 */
export function openBooks(o: {
  store: Store;
  engine: EngineSurface;
  clock: Clock;
  timers: Timers;
  marketDataStore: MarketDataStore;
  log: Logger;
  closers: Closers;
  role: RoleParts;
  samples: SampleLog | undefined;
  times: ReadonlyMap<string, number> | undefined;
}) {
  const { store, engine, clock, marketDataStore, role } = o;
  const books = new CommittedBooks();
  books.seed({ ...engine.bookSeed(), ts: clock.now(), times: o.times });
  engine.onCommitted((events) => books.apply(events));
  const catalog: CatalogServices = Object.freeze({
    // The catalog's live prices come from market data (the midpoint, or the last trade when the spread is
    // wider than 0.10), and market data labels outcomes from the catalog: each asks the other only when
    // serving, so the two consts refer to each other through functions that run once both exist.
    read: new CatalogReader(store, (tokenId) => marketData.displayPrice(tokenId)),
    write: new CatalogWriter(store, clock),
  });
  const bookSource: BookSource = {
    bookSnapshot: (tokenId) => books.book(tokenId),
    lastTradePrice: (tokenId) => books.lastTrade(tokenId),
    tokenOutcome: (tokenId) => tokenOutcomeOf(engine, tokenId),
    market: (conditionId) => engine.market(conditionId),
    // Committed state is current by construction: an acknowledged order was applied before its answer left.
    snapshotStale: () => false,
    // Asked only for a token the engine knows and these books do not: its market is registered and its
    // `market` event not yet committed (a reader that heard of it before its import was answered). The read
    // waits for that commit, after which the books hold the market, rather than answering 503; an engine
    // that stopped resolves at once, and the read answers 503.
    refreshSnapshot: () => engine.afterCommit().then(() => undefined),
  };
  const marketData = new MarketDataReader(bookSource, marketDataStore, (conditionId) => catalog.read.marketByCondition(conditionId)?.outcomes);
  // Records midpoints as books change (projections/market-data.ts); trade prices come from the projector.
  // A replica samples nothing: a sample's time is when the sequencer took it, which its log carries.
  if (role.replica === undefined) {
    // A change is dated by its batch's journal time: when it happened, whenever its commit landed.
    const bookChanges = {
      onSnapshots: (l: (tokenIds: readonly string[], atMs?: number) => void) =>
        books.onApplied((changes, events) => changes.length > 0 && l(changes.flatMap((c) => c.tokenIds), events.at(-1)?.ts)),
    };
    const samples = o.samples;
    const onSample = samples && ((key: (string | number)[], pips: number) => samples.hold('m', key, pips));
    const sampler = new MidpointSampler({ feed: bookChanges, md: marketDataStore, midpoint: (t) => marketData.midpointPips(t), now: () => clock.now(), timers: o.timers, log: o.log, onSample });
    sampler.start();
    o.closers.add('midpoint sampler', () => sampler.stop());
  }
  return { books, catalog, marketData };
}

/** The committed books as wallet data's live prices (AppContext.livePrices). */
export function livePricesOf(books: CommittedBooks): AppContext['livePrices'] {
  return {
    bookSnapshot: (tokenId: string) => books.book(tokenId),
    lastTradePrice: (tokenId: string) => books.lastTrade(tokenId),
    onChanged: (listener: (tokenIds: readonly string[]) => void) =>
      books.onApplied((changes, events) => {
        const tokens = changes.flatMap((c) => c.tokenIds);
        for (const e of events) if (e.type === 'fill') tokens.push(e.takerTokenId, e.makerTokenId);
        if (tokens.length > 0) listener(tokens);
      }),
  };
}

/** Liquidity rewards: the sampler scores the open orders of the rewards markets every rewards.sampleSeconds. */
export function startRewards(o: {
  config: Readonly<Config>;
  views: ViewStore;
  catalog: CatalogServices;
  engine: EngineSurface;
  clock: Clock;
  timers: Timers;
  log: Logger;
  closers: Closers;
  samples: SampleLog | undefined;
}): void {
  const { catalog, engine, clock, views, samples } = o;
  // Accruals are sampled on the clock, not derived from the journal: a sequencer logs them for its replicas.
  const logged: Pick<ViewStore, 'get' | 'put'> = {
    get: (key) => views.get(key),
    put: (key, value) => {
      views.put(key, value);
      samples?.hold('v', key, value);
    },
  };
  const rewardsSampler = new RewardsSampler({
    views: samples === undefined ? views : logged,
    markets: () =>
      catalog.read.samplingRecords().flatMap((m) => {
        const program = rewardProgram(m);
        return program === undefined ? [] : [{ conditionId: m.conditionId, token0: m.clobTokenIds[0], program }];
      }),
    // The midpoint of the very orders it scores: one state, even while the test clock advances ahead of commits.
    midpoint: (_token0, orders) => bookMidpoint(orders),
    orders: (cids) => engine.restingOrders(cids),
    now: () => clock.now(),
    timers: o.timers,
    sampleSeconds: o.config.rewards.sampleSeconds,
    log: o.log,
  });
  rewardsSampler.start();
  o.closers.add('rewards sampler', () => rewardsSampler.stop());
}

/**
 * Connects the catalog to the engine's market registry and loads the demo catalog into an empty store:
 * every stored market is registered, and every later change is passed on as it commits. A catalog write
 * resolves only once the engine has committed the `market` events it caused (projections/catalog/writer.ts),
 * and the committed books have applied them by then: an admin write is answered, like an order, after the
 * commit of what it changed, so the market's book (empty if nothing rests) is there for the first read that
 * follows on /book and the market channel, with its new tick. The start-up registrations are committed
 * before the listener opens, for the same reason. With `history`
 * (the live demo), a fresh store's clock is held `history.ms` back first, so the catalog and the demo
 * funding date from where the replayed history starts; the catalog's own dates stay based on today.
 */
export async function startCatalog(o: {
  catalog: CatalogServices;
  engine: EngineAdmin & Pick<EngineSurface, 'afterCommit'>;
  store: Store;
  config: Readonly<Config>;
  clock: Clock;
  log: Logger;
  history?: { clock: ReplayClock; ms: number };
}): Promise<void> {
  const { catalog, engine, store, config, clock, log, history } = o;
  const register = (markets: ReturnType<CatalogReader['tradingMarkets']>) => {
    for (const m of markets) {
      try {
        engine.registerMarket(m);
      } catch (err) {
        log.error({ err, conditionId: m.conditionId }, 'engine refused a catalog market');
      }
    }
    // Resolves once what these registrations journaled is durable; with nothing new, once a registration
    // of the same parameters still in flight is. An engine that stopped resolves at once: its reads answer
    // 503 anyway.
    return engine.afterCommit();
  };
  await register(catalog.read.tradingMarkets());
  catalog.write.onMarketsChanged(register);
  if (config.demo !== 'off' && catalog.read.isEmpty() && store.meta.get(metaKeys.demoLoaded) === undefined) {
    const today = clock.now();
    history?.clock.hold(today - history.ms);
    const { summary, funded } = await loadDemo(catalog.write, engine, today);
    await store.meta.put(metaKeys.demoLoaded, new Date(clock.now()).toISOString());
    log.info({ events: summary.events.created, markets: summary.markets.created, fundedWallets: funded }, 'demo catalog loaded');
  }
}
