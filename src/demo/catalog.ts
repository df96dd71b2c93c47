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
import { keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { EventInput, MarketInput, TagInput } from '../edge/schemas/admin.ts';
import type { EngineAdmin } from '../edge/context.ts';
import type { CatalogWriter, UpsertSummary } from '../projections/catalog.ts';
import { UNITS } from '../domain/units.ts';

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
const hex32 = (text: string) => keccak256(toHex(text));

/** The demo's base day: the first of November 2026, unless the caller passes its own. */
export const DEMO_BASE_MS = Date.UTC(2026, 10, 1);

const TAG_NAMES = {
  politics: ['1', 'Politics', 'politics'],
  elections: ['2', 'Elections', 'elections'],
  crypto: ['3', 'Crypto', 'crypto'],
  bitcoin: ['4', 'Bitcoin', 'bitcoin'],
  sports: ['5', 'Sports', 'sports'],
  economy: ['6', 'Economy', 'economy'],
  science: ['7', 'Science', 'science'],
  culture: ['8', 'Pop Culture', 'pop-culture'],
} as const;
type TagName = keyof typeof TAG_NAMES;

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

interface MarketSpec {
  question: string;
  outcomes?: [string, string];
  yes: number;
  group?: string;
  tick?: '0.1' | '0.01' | '0.001';
  rewards?: number;
  takerFee?: number;
}

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

interface EventSpec {
  title: string;
  slug: string;
  tags: TagName[];
  endDays: number;
  description: string;
  source: string;
  markets: MarketSpec[];
  negRisk?: boolean;
  creator?: string;
  closed?: boolean;
  series?: boolean;
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
  const jitter = (p: number) => Math.min(0.97, Math.max(0.03, p + (r() - 0.5) * 0.1));
  const specs: EventSpec[] = [
    {
      title: 'Presidential Election Winner 2028',
      slug: 'presidential-election-winner-2028',
      tags: ['politics', 'elections'],
      endDays: 735,
      negRisk: true,
      description: 'This market resolves to the candidate who wins the 2028 US presidential election, as called by the major networks.',
      source: 'https://www.archives.gov/electoral-college',
      markets: [
        { question: 'Will JD Vance win the 2028 US Presidential Election?', group: 'JD Vance', yes: jitter(0.28), rewards: 25 },
        { question: 'Will Gavin Newsom win the 2028 US Presidential Election?', group: 'Gavin Newsom', yes: jitter(0.18), rewards: 25 },
        { question: 'Will Alexandria Ocasio-Cortez win the 2028 US Presidential Election?', group: 'Alexandria Ocasio-Cortez', yes: jitter(0.08) },
        { question: 'Will Marco Rubio win the 2028 US Presidential Election?', group: 'Marco Rubio', yes: jitter(0.07) },
        { question: 'Will another candidate win the 2028 US Presidential Election?', group: 'Other', yes: jitter(0.39) },
      ],
    },
    {
      title: 'Which party wins the House in 2028?',
      slug: 'which-party-wins-the-house-2028',
      tags: ['politics', 'elections'],
      endDays: 735,
      negRisk: true,
      description: 'Resolves to the party holding a majority of House seats after the 2028 elections.',
      source: 'https://clerk.house.gov',
      markets: [
        { question: 'Will the Democratic Party win the House in 2028?', group: 'Democratic', yes: jitter(0.55) },
        { question: 'Will the Republican Party win the House in 2028?', group: 'Republican', yes: jitter(0.45) },
      ],
    },
    {
      title: 'Fed decision in December',
      slug: 'fed-decision-in-december',
      tags: ['economy'],
      endDays: 25,
      negRisk: true,
      description: 'Resolves to the change of the federal funds target range announced after the December FOMC meeting.',
      source: 'https://www.federalreserve.gov/monetarypolicy/fomccalendars.htm',
      markets: [
        { question: 'Will the Fed decrease interest rates by 50+ bps after the December 2026 meeting?', group: '50+ bps decrease', yes: jitter(0.05), tick: '0.001' },
        { question: 'Will the Fed decrease interest rates by 25 bps after the December 2026 meeting?', group: '25 bps decrease', yes: jitter(0.62), rewards: 40 },
        { question: 'Will there be no change in Fed interest rates after the December 2026 meeting?', group: 'No change', yes: jitter(0.31), rewards: 40 },
        { question: 'Will the Fed increase interest rates by 25+ bps after the December 2026 meeting?', group: '25+ bps increase', yes: jitter(0.02), tick: '0.001' },
      ],
    },
    {
      title: 'NBA Champion 2027',
      slug: 'nba-champion-2027',
      tags: ['sports'],
      endDays: 220,
      negRisk: true,
      description: 'Resolves to the team that wins the 2027 NBA Finals.',
      source: 'https://www.nba.com',
      markets: ['Oklahoma City Thunder', 'Denver Nuggets', 'Boston Celtics', 'New York Knicks', 'Cleveland Cavaliers', 'Other'].map((team, i) => ({
        question: `Will the ${team === 'Other' ? 'field (any other team)' : team} win the 2027 NBA Finals?`,
        group: team,
        yes: jitter([0.3, 0.15, 0.12, 0.12, 0.1, 0.21][i]),
        rewards: i < 2 ? 15 : undefined,
      })),
    },
    {
      title: 'Will Bitcoin reach $150,000 by December 31, 2026?',
      slug: 'will-bitcoin-reach-150k-by-december-31-2026',
      tags: ['crypto', 'bitcoin'],
      endDays: 40,
      description: 'Resolves Yes if any Binance BTC/USDT 1-minute candle closes at or above $150,000 before the end date.',
      source: 'https://www.binance.com/en/trade/BTC_USDT',
      markets: [{ question: 'Will Bitcoin reach $150,000 by December 31, 2026?', yes: jitter(0.12), rewards: 30, takerFee: 100 }],
    },
    {
      title: 'Will Ethereum flip $6,000 in 2026?',
      slug: 'will-ethereum-flip-6000-in-2026',
      tags: ['crypto'],
      endDays: 40,
      description: 'Resolves Yes if ETH trades at or above $6,000 on Coinbase before January 1, 2027.',
      source: 'https://www.coinbase.com/price/ethereum',
      markets: [{ question: 'Will Ethereum trade above $6,000 in 2026?', yes: jitter(0.09) }],
    },
    {
      title: 'Will a US recession be declared in 2027?',
      slug: 'us-recession-2027',
      tags: ['economy', 'politics'],
      endDays: 400,
      description: 'Resolves Yes if the NBER announces a US recession starting in 2027.',
      source: 'https://www.nber.org/research/business-cycle-dating',
      markets: [{ question: 'US recession in 2027?', yes: jitter(0.3) }],
    },
    {
      title: 'US CPI inflation above 3% in December?',
      slug: 'us-cpi-above-3-percent-december',
      tags: ['economy'],
      endDays: 55,
      description: 'Resolves Yes if the year-over-year CPI reported by the BLS for December 2026 is above 3.0%.',
      source: 'https://www.bls.gov/cpi/',
      markets: [{ question: 'Will December 2026 CPI inflation be above 3.0%?', yes: jitter(0.4), rewards: 10 }],
    },
    {
      title: 'Will SpaceX Starship reach orbit before 2027?',
      slug: 'starship-orbit-before-2027',
      tags: ['science'],
      endDays: 40,
      description: 'Resolves Yes if a Starship vehicle completes at least one full orbit before January 1, 2027.',
      source: 'https://www.spacex.com/launches/',
      markets: [{ question: 'Will Starship complete an orbit before 2027?', yes: jitter(0.55) }],
    },
    {
      title: 'Will a room-temperature superconductor be replicated in 2027?',
      slug: 'room-temperature-superconductor-2027',
      tags: ['science'],
      endDays: 400,
      description: 'Resolves Yes if a peer-reviewed replication of an ambient-pressure room-temperature superconductor is published in 2027.',
      source: 'https://www.nature.com',
      markets: [{ question: 'Room-temperature superconductor replicated in 2027?', yes: jitter(0.04), tick: '0.001' }],
    },
    {
      title: 'Best Picture at the 2027 Oscars',
      slug: 'oscars-2027-best-picture',
      tags: ['culture'],
      endDays: 120,
      negRisk: true,
      description: 'Resolves to the film that wins Best Picture at the 99th Academy Awards.',
      source: 'https://www.oscars.org',
      markets: ['One Battle After Another', 'Hamnet', 'Marty Supreme', 'Other'].map((film, i) => ({
        question: `Will ${film === 'Other' ? 'another film' : film} win Best Picture at the 2027 Oscars?`,
        group: film,
        yes: jitter([0.35, 0.25, 0.15, 0.25][i]),
      })),
    },
    {
      title: 'Will Taylor Swift announce a new album before March?',
      slug: 'taylor-swift-new-album-before-march',
      tags: ['culture'],
      endDays: 100,
      description: 'Resolves Yes if Taylor Swift officially announces a new studio album before March 1, 2027.',
      source: 'https://www.taylorswift.com',
      markets: [{ question: 'New Taylor Swift album announced before March 2027?', yes: jitter(0.33) }],
    },
    {
      title: 'Super Bowl LXI Winner',
      slug: 'super-bowl-lxi-winner',
      tags: ['sports'],
      endDays: 80,
      negRisk: true,
      description: 'Resolves to the team that wins Super Bowl LXI.',
      source: 'https://www.nfl.com',
      markets: ['Kansas City Chiefs', 'Philadelphia Eagles', 'Detroit Lions', 'Other'].map((team, i) => ({
        question: `Will the ${team === 'Other' ? 'field (any other team)' : team} win Super Bowl LXI?`,
        group: team,
        yes: jitter([0.2, 0.18, 0.14, 0.48][i]),
      })),
    },
    {
      title: 'Will the Champions League final be won on penalties?',
      slug: 'champions-league-final-penalties-2027',
      tags: ['sports'],
      endDays: 190,
      creator: 'acme-markets',
      description: 'Resolves Yes if the 2027 UEFA Champions League final is decided by a penalty shoot-out.',
      source: 'https://www.uefa.com',
      markets: [{ question: 'Champions League 2027 final decided on penalties?', yes: jitter(0.2) }],
    },
    {
      title: 'Will Solana ETF inflows top $1B in 2026?',
      slug: 'solana-etf-inflows-1b-2026',
      tags: ['crypto'],
      endDays: 40,
      creator: 'acme-markets',
      description: 'Resolves Yes if cumulative net inflows into US spot Solana ETFs exceed $1 billion in 2026.',
      source: 'https://farside.co.uk',
      markets: [{ question: 'Solana ETF net inflows above $1B in 2026?', yes: jitter(0.5), rewards: 5 }],
    },
    {
      title: 'Will the 2026 midterms turnout exceed 50%?',
      slug: 'midterms-2026-turnout-50',
      tags: ['politics', 'elections'],
      endDays: -10,
      closed: true,
      description: 'Resolved market kept for history: turnout of the voting-eligible population in the 2026 midterms.',
      source: 'https://election.lab.ufl.edu',
      markets: [{ question: 'Will 2026 midterm turnout exceed 50%?', yes: 0.5 }],
    },
  ];
  const events = specs.map((s, i) => buildEvent(s, i + 1, baseMs));
  // The recurring series: one "Up or Down" event per day around the base day.
  for (let d = -3; d <= 7; d++) {
    const day = baseMs + d * DAY;
    const label = new Date(day).toLocaleDateString('en-US', { month: 'long', day: 'numeric', timeZone: 'UTC' });
    const slug = `bitcoin-up-or-down-${new Date(day).toISOString().slice(0, 10)}`;
    events.push(
      buildEvent(
        {
          title: `Bitcoin Up or Down on ${label}?`,
          slug,
          tags: ['crypto', 'bitcoin'],
          endDays: d + 1,
          closed: d < 0,
          series: true,
          description: `Resolves Up if the BTC-USD close at 12:00 ET on ${label} is at or above the open of the same candle 24 hours earlier.`,
          source: 'https://www.coinbase.com/advanced-trade/spot/BTC-USD',
          markets: [{ question: `Bitcoin Up or Down on ${label}?`, outcomes: ['Up', 'Down'], yes: d < 0 ? 0.5 : jitter(0.5), rewards: d >= 0 ? 20 : undefined, takerFee: 100 }],
        },
        events.length + 1,
        baseMs,
      ),
    );
  }
  return events;
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
  const privateKey = keccak256(toHex(`pm-exchange demo wallet ${i}`));
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
