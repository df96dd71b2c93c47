/**
 * Deterministic catalog generators, in the admin upsert shape (POST /admin/events, tools/import-catalog.ts):
 *
 *   demoCatalog()       the demo `npm start` loads into an empty store: ~40 events over eight tags, a
 *                       daily recurring series, plain binary markets and neg-risk groups, liquidity
 *                       rewards on some markets, a few events of a second site (creator).
 *   syntheticCatalog()  any number of events for benchmarks and import tests (100,000 events with
 *                       200,000 markets in the catalog benchmark), with a vocabulary wide enough for
 *                       search to have rare and common words.
 *   DEMO_WALLETS        funded demo wallets; their keys are derived from public strings, so they are
 *                       TEST KEYS ONLY (README lists them).
 *
 * Same seed and same base day -> byte-identical output, so loading twice changes nothing.
 *
 * Lives in src/ because the app loads the demo into an empty store (app.ts); tests and benches generate
 * their catalogs here too. CLI: tools/demo-catalog.ts writes either catalog as JSON.
 */
import { keccak256 } from 'ox/Hash';
import { fromString } from 'ox/Hex';
import { privateKeyToAccount } from 'viem/accounts';
import type { EventInput, MarketInput, TagInput } from '../edge/schemas/admin.ts';
import type { EngineAdmin } from '../edge/context.ts';
import type { CatalogWriter, UpsertSummary } from '../projections/catalog.ts';
import { UNITS } from '../domain/units.ts';
import { DEMO_EVENTS, TAG_NAMES, type EventSpec, type MarketSpec, type TagName } from './demo-events.ts';

const DAY = 86_400_000;

/** mulberry32: small, fast, good enough for test data. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const iso = (ms: number) => new Date(ms).toISOString();
const startOfDay = (ms: number) => Math.floor(ms / DAY) * DAY;
const hex32 = (text: string) => keccak256(fromString(text));

/** The demo's base day: the first of November 2026, unless the caller passes its own. */
export const DEMO_BASE_MS = Date.UTC(2026, 10, 1);

/** Catalog-wide records are dated a quarter before the base day. */
const demoTag = (name: TagName, baseMs: number): TagInput => {
  const [id, label, slug] = TAG_NAMES[name];
  return { id, label, slug, createdAt: iso(baseMs - 90 * DAY), updatedAt: iso(baseMs - 90 * DAY) };
};

const btcSeries = (baseMs: number) => ({
  id: '1',
  ticker: 'btc-up-or-down-daily',
  slug: 'btc-up-or-down-daily',
  title: 'Bitcoin Up or Down Daily',
  seriesType: 'single',
  recurrence: 'daily',
  createdAt: iso(baseMs - 90 * DAY),
  updatedAt: iso(baseMs - 90 * DAY),
});

function price(p: number, tick: number): [string, string] {
  const yes = Math.min(1 - tick, Math.max(tick, Math.round(p / tick) * tick));
  const dec = String(tick).split('.')[1]?.length ?? 0;
  return [yes.toFixed(dec), (1 - yes).toFixed(dec)];
}

/** The question id of a demo market: how the live demo tells its markets from ones an admin added. */
export const demoQuestionId = (slug: string) => hex32(`pm-exchange demo question ${slug}`);

function market(slugBase: string, spec: MarketSpec, creator: string | undefined): MarketInput {
  const tick = spec.tick ?? '0.01';
  const slug = `${slugBase}${spec.group ? '-' + spec.group.toLowerCase().replace(/[^a-z0-9]+/g, '-') : ''}`;
  return {
    question: spec.question,
    slug,
    questionID: demoQuestionId(slug),
    outcomes: JSON.stringify(spec.outcomes ?? ['Yes', 'No']),
    outcomePrices: JSON.stringify(price(spec.yes, Number(tick))),
    orderPriceMinTickSize: tick,
    orderMinSize: 5,
    takerBaseFee: spec.takerFee ?? 0,
    groupItemTitle: spec.group ?? '',
    rewardsMinSize: spec.rewards ? 50 : 0,
    rewardsMaxSpread: spec.rewards ? 3.5 : 0,
    clobRewards: spec.rewards ? [{ rewardsDailyRate: spec.rewards }] : [],
    ...(creator ? { creator } : {}),
  };
}

function buildEvent(spec: EventSpec, id: number, baseMs: number): EventInput {
  const created = baseMs - (60 - id) * DAY;
  return {
    id: String(id),
    slug: spec.slug,
    ticker: spec.slug,
    title: spec.title,
    description: spec.description,
    resolutionSource: spec.source,
    image: `https://example.invalid/img/${spec.slug}.png`,
    icon: `https://example.invalid/icon/${spec.slug}.png`,
    startDate: iso(created),
    creationDate: iso(created),
    createdAt: iso(created),
    updatedAt: iso(created),
    endDate: iso(baseMs + spec.endDays * DAY),
    active: true,
    closed: spec.closed ?? false,
    archived: false,
    negRisk: spec.negRisk ?? false,
    ...(spec.creator ? { creator: spec.creator } : {}),
    tags: spec.tags.map((t) => demoTag(t, baseMs)),
    series: spec.series ? [btcSeries(baseMs)] : [],
    eventMetadata: spec.series ? { context: 'Resolves on the Coinbase BTC-USD daily candle (12:00 ET to 12:00 ET).' } : {},
    markets: spec.markets.map((m) => ({
      ...market(spec.slug, m, spec.creator),
      createdAt: iso(created),
      updatedAt: iso(created),
      acceptingOrdersTimestamp: iso(created),
      ...(spec.closed ? { closed: true } : {}),
    })),
  };
}

/** The demo catalog: ~40 events, deterministic for a seed and base day. */
export function demoCatalog(opts: { seed?: number; baseMs?: number } = {}): EventInput[] {
  const r = rng(opts.seed ?? 2026);
  const baseMs = startOfDay(opts.baseMs ?? DEMO_BASE_MS);
  // Draws in table order, market by market: the same seed gives the same prices.
  const jitter = (p: number) => Math.min(0.97, Math.max(0.03, p + (r() - 0.5) * 0.1));
  const priced = (s: EventSpec): EventSpec => (s.closed ? s : { ...s, markets: s.markets.map((m) => ({ ...m, yes: jitter(m.yes) })) });
  const events = DEMO_EVENTS.map((s, i) => buildEvent(priced(s), i + 1, baseMs));
  // The recurring series: one "Up or Down" event per day around the base day.
  for (let d = -3; d <= 7; d++) events.push(buildEvent(priced(dailyEvent(baseMs + d * DAY, d)), events.length + 1, baseMs));
  return events;
}

/** The series' event of `day`, `d` days from the base day (closed before it). */
function dailyEvent(day: number, d: number): EventSpec {
  const label = new Date(day).toLocaleDateString('en-US', { month: 'long', day: 'numeric', timeZone: 'UTC' });
  return {
    title: `Bitcoin Up or Down on ${label}?`,
    slug: `bitcoin-up-or-down-${new Date(day).toISOString().slice(0, 10)}`,
    tags: ['crypto', 'bitcoin'],
    endDays: d + 1,
    closed: d < 0,
    series: true,
    description: `Resolves Up if the BTC-USD close at 12:00 ET on ${label} is at or above the open of the same candle 24 hours earlier.`,
    source: 'https://www.coinbase.com/advanced-trade/spot/BTC-USD',
    markets: [{ question: `Bitcoin Up or Down on ${label}?`, outcomes: ['Up', 'Down'], yes: 0.5, rewards: d >= 0 ? 20 : undefined, takerFee: 100 }],
  };
}

// ---- synthetic catalogs (benchmarks) --------------------------------------------------------------

const SUBJECTS = [
  'Bitcoin', 'Ethereum', 'Solana', 'Dogecoin', 'Tesla', 'Nvidia', 'Apple', 'OpenAI', 'SpaceX', 'the Fed', 'the ECB', 'Congress',
  'the Senate', 'the Lakers', 'the Celtics', 'Real Madrid', 'Arsenal', 'Ferrari', 'Taylor Swift', 'Drake', 'the Oscars', 'NASA',
  'Boeing', 'Amazon', 'Google', 'Microsoft', 'Meta', 'Netflix', 'Disney', 'Gold', 'Oil', 'the S&P 500', 'the Nasdaq', 'Argentina',
  'Brazil', 'Japan', 'India', 'Germany', 'France', 'Canada', 'Mexico', 'Ukraine', 'Israel', 'Taiwan', 'Kenya', 'Norway', 'Chile',
];
const VERBS = ['reach', 'beat', 'announce', 'launch', 'win', 'lose', 'cut', 'raise', 'approve', 'ban', 'sign', 'exceed', 'drop below', 'hit', 'merge with', 'acquire'];
const OBJECTS = [
  'a new record', 'its target', 'the championship', 'a trade deal', 'interest rates', 'a new product', 'an IPO', 'the final',
  'a ceasefire', 'a stimulus bill', 'an ETF', 'the playoffs', 'a summit', 'new tariffs', 'a partnership', 'the budget',
];
const SYN_TAGS = ['Politics', 'Crypto', 'Sports', 'Economy', 'Science', 'Tech', 'Culture', 'World', 'Finance', 'Elections', 'AI', 'Weather', 'Soccer', 'Basketball', 'Movies', 'Music', 'Commodities', 'Stocks', 'Space', 'Health'];

export interface SyntheticOptions {
  seed?: number;
  events: number;
  /** Markets per event on average (exact over multiples of 4 events). Default 2. */
  marketsPerEvent?: number;
  baseMs?: number;
  /** First event / market id. Default 1. */
  firstId?: number;
  /** Share of events created by one of a few sites. Default 0.2. */
  creatorShare?: number;
}

/**
 * Synthetic events: ids from `firstId`, every slug and condition id unique, 20 tags, a daily series,
 * markets per event cycling around `marketsPerEvent` (exact average over multiples of 4 events; groups
 * of two or more are neg-risk), a share of the events (default a fifth) of three sites.
 */
export function syntheticCatalog(opts: SyntheticOptions): EventInput[] {
  const r = rng(opts.seed ?? 7);
  const baseMs = startOfDay(opts.baseMs ?? DEMO_BASE_MS);
  const perEvent = opts.marketsPerEvent ?? 2;
  const firstId = opts.firstId ?? 1;
  const creatorShare = opts.creatorShare ?? 0.2;
  const pick = <T>(a: readonly T[]) => a[Math.floor(r() * a.length)];
  const tags: TagInput[] = SYN_TAGS.map((label, i) => ({ id: String(100 + i), label, slug: `topic-${label.toLowerCase()}` }));
  const out: EventInput[] = [];
  let marketId = firstId;
  for (let i = 0; i < opts.events; i++) {
    const id = firstId + i;
    const subject = pick(SUBJECTS);
    const verb = pick(VERBS);
    const object = pick(OBJECTS);
    const year = 2026 + Math.floor(r() * 3);
    const title = `Will ${subject} ${verb} ${object} in ${year}?`;
    const slug = `${title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')}-${id}`;
    // Cycles -1, 0, +1, 0 around the average, so N events carry exactly N x marketsPerEvent markets
    // (N a multiple of 4).
    const nMarkets = Math.max(1, perEvent + [-1, 0, 1, 0][i % 4]);
    const negRisk = nMarkets > 1;
    const created = baseMs - Math.floor(r() * 365) * DAY;
    const t1 = tags[Math.floor(r() * tags.length)];
    const t2 = tags[Math.floor(r() * tags.length)];
    const daily = r() < 0.05;
    const creator = r() < creatorShare ? pick(['site-a', 'site-b', 'site-c']) : undefined;
    const markets: MarketInput[] = [];
    for (let k = 0; k < nMarkets; k++) {
      const mid = marketId++;
      const option = negRisk ? ` (option ${String.fromCharCode(65 + k)})` : '';
      const yes = Math.round((0.03 + r() * 0.94) * 100) / 100;
      markets.push({
        id: String(mid),
        question: `${title.slice(0, -1)}${option}?`,
        slug: `${slug}-m${mid}`,
        conditionId: hex32(`pm-exchange synthetic market ${mid}`),
        outcomePrices: [yes.toFixed(2), (1 - yes).toFixed(2)],
        orderPriceMinTickSize: '0.01',
        orderMinSize: 5,
        groupItemTitle: negRisk ? `Option ${String.fromCharCode(65 + k)}` : '',
        clobRewards: r() < 0.1 ? [{ rewardsDailyRate: 10 }] : [],
        ...(creator ? { creator } : {}),
      });
    }
    const closed = r() < 0.3;
    out.push({
      id: String(id),
      slug,
      title,
      description: `Synthetic event ${id} about ${subject}.`,
      startDate: iso(created),
      createdAt: iso(created),
      endDate: iso(created + (30 + Math.floor(r() * 700)) * DAY),
      active: r() < 0.95,
      closed,
      archived: closed && r() < 0.3,
      negRisk,
      ...(creator ? { creator } : {}),
      tags: t1 === t2 ? [t1] : [t1, t2],
      series: daily ? [{ id: '900', slug: 'synthetic-daily', title: 'Synthetic Daily', recurrence: 'daily' }] : [],
      markets: markets.map((m) => (closed ? { ...m, closed: true } : m)),
    });
  }
  return out;
}

// ---- demo wallets and loading --------------------------------------------------------------------

export interface DemoWallet {
  /** TEST ONLY: derived from a public string. */
  privateKey: `0x${string}`;
  address: string;
}

/** Five demo wallets, private key = keccak256("pm-exchange demo wallet <i>"). */
export const DEMO_WALLETS: readonly DemoWallet[] = [1, 2, 3, 4, 5].map((i) => {
  const privateKey = keccak256(fromString(`pm-exchange demo wallet ${i}`));
  return { privateKey, address: privateKeyToAccount(privateKey).address.toLowerCase() };
});

/** USDC credited to each demo wallet. */
export const DEMO_FUNDING_UNITS = 10_000 * UNITS;

export interface DemoLoadResult {
  summary: UpsertSummary;
  /** Wallets credited (0 without an engine). */
  funded: number;
}

/**
 * Loads the demo catalog through the same validated upsert as the admin API, then funds the demo
 * wallets through the engine (its journal keeps the deposits like any other).
 */
export async function loadDemo(writer: CatalogWriter, engine: EngineAdmin | undefined, baseMs: number): Promise<DemoLoadResult> {
  const outcome = await writer.upsertEvents(demoCatalog({ baseMs }));
  if (!outcome.ok) throw new Error(`demo catalog rejected: ${JSON.stringify(outcome.errors.slice(0, 5))}`);
  let funded = 0;
  if (engine) {
    for (const w of DEMO_WALLETS) {
      const r = await engine.deposit(w.address, DEMO_FUNDING_UNITS);
      if (!r.ok) throw new Error(`demo funding of ${w.address} failed with code ${r.code}`);
      funded++;
    }
  }
  return { summary: outcome.summary, funded };
}
