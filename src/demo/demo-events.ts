/**
 * The demo catalog's events as data (catalog.ts turns them into admin upserts). `yes` is a market's
 * price before the generator's jitter; a closed event keeps its prices as written.
 */

export const TAG_NAMES = {
  politics: ['1', 'Politics', 'politics'],
  elections: ['2', 'Elections', 'elections'],
  crypto: ['3', 'Crypto', 'crypto'],
  bitcoin: ['4', 'Bitcoin', 'bitcoin'],
  sports: ['5', 'Sports', 'sports'],
  economy: ['6', 'Economy', 'economy'],
  science: ['7', 'Science', 'science'],
  culture: ['8', 'Pop Culture', 'pop-culture'],
} as const;
export type TagName = keyof typeof TAG_NAMES;

export interface MarketSpec {
  question: string;
  outcomes?: [string, string];
  yes: number;
  group?: string;
  tick?: '0.1' | '0.01' | '0.001';
  rewards?: number;
  takerFee?: number;
}

export interface EventSpec {
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

/** A neg-risk field's markets, one per [name, yes, daily reward rate?] in order, asked by `question(name)`. */
function field(question: (name: string) => string, entries: ReadonlyArray<readonly [string, number, number?]>): MarketSpec[] {
  return entries.map(([name, yes, rewards]) => ({ question: question(name), group: name, yes, rewards }));
}

/** The demo's events in id order (ids from 1); the daily series follows them. */
export const DEMO_EVENTS: readonly EventSpec[] = [
  {
    title: 'Presidential Election Winner 2028',
    slug: 'presidential-election-winner-2028',
    tags: ['politics', 'elections'],
    endDays: 735,
    negRisk: true,
    description: 'This market resolves to the candidate who wins the 2028 US presidential election, as called by the major networks.',
    source: 'https://www.archives.gov/electoral-college',
    markets: [
      { question: 'Will JD Vance win the 2028 US Presidential Election?', group: 'JD Vance', yes: 0.28, rewards: 25 },
      { question: 'Will Gavin Newsom win the 2028 US Presidential Election?', group: 'Gavin Newsom', yes: 0.18, rewards: 25 },
      { question: 'Will Alexandria Ocasio-Cortez win the 2028 US Presidential Election?', group: 'Alexandria Ocasio-Cortez', yes: 0.08 },
      { question: 'Will Marco Rubio win the 2028 US Presidential Election?', group: 'Marco Rubio', yes: 0.07 },
      { question: 'Will another candidate win the 2028 US Presidential Election?', group: 'Other', yes: 0.39 },
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
      { question: 'Will the Democratic Party win the House in 2028?', group: 'Democratic', yes: 0.55 },
      { question: 'Will the Republican Party win the House in 2028?', group: 'Republican', yes: 0.45 },
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
      { question: 'Will the Fed decrease interest rates by 50+ bps after the December 2026 meeting?', group: '50+ bps decrease', yes: 0.05, tick: '0.001' },
      { question: 'Will the Fed decrease interest rates by 25 bps after the December 2026 meeting?', group: '25 bps decrease', yes: 0.62, rewards: 40 },
      { question: 'Will there be no change in Fed interest rates after the December 2026 meeting?', group: 'No change', yes: 0.31, rewards: 40 },
      { question: 'Will the Fed increase interest rates by 25+ bps after the December 2026 meeting?', group: '25+ bps increase', yes: 0.02, tick: '0.001' },
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
    markets: field((team) => `Will the ${team === 'Other' ? 'field (any other team)' : team} win the 2027 NBA Finals?`, [
      ['Oklahoma City Thunder', 0.3, 15],
      ['Denver Nuggets', 0.15, 15],
      ['Boston Celtics', 0.12],
      ['New York Knicks', 0.12],
      ['Cleveland Cavaliers', 0.1],
      ['Other', 0.21],
    ]),
  },
  {
    title: 'Will Bitcoin reach $150,000 by December 31, 2026?',
    slug: 'will-bitcoin-reach-150k-by-december-31-2026',
    tags: ['crypto', 'bitcoin'],
    endDays: 40,
    description: 'Resolves Yes if any Binance BTC/USDT 1-minute candle closes at or above $150,000 before the end date.',
    source: 'https://www.binance.com/en/trade/BTC_USDT',
    markets: [{ question: 'Will Bitcoin reach $150,000 by December 31, 2026?', yes: 0.12, rewards: 30, takerFee: 100 }],
  },
  {
    title: 'Will Ethereum flip $6,000 in 2026?',
    slug: 'will-ethereum-flip-6000-in-2026',
    tags: ['crypto'],
    endDays: 40,
    description: 'Resolves Yes if ETH trades at or above $6,000 on Coinbase before January 1, 2027.',
    source: 'https://www.coinbase.com/price/ethereum',
    markets: [{ question: 'Will Ethereum trade above $6,000 in 2026?', yes: 0.09 }],
  },
  {
    title: 'Will a US recession be declared in 2027?',
    slug: 'us-recession-2027',
    tags: ['economy', 'politics'],
    endDays: 400,
    description: 'Resolves Yes if the NBER announces a US recession starting in 2027.',
    source: 'https://www.nber.org/research/business-cycle-dating',
    markets: [{ question: 'US recession in 2027?', yes: 0.3 }],
  },
  {
    title: 'US CPI inflation above 3% in December?',
    slug: 'us-cpi-above-3-percent-december',
    tags: ['economy'],
    endDays: 55,
    description: 'Resolves Yes if the year-over-year CPI reported by the BLS for December 2026 is above 3.0%.',
    source: 'https://www.bls.gov/cpi/',
    markets: [{ question: 'Will December 2026 CPI inflation be above 3.0%?', yes: 0.4, rewards: 10 }],
  },
  {
    title: 'Will SpaceX Starship reach orbit before 2027?',
    slug: 'starship-orbit-before-2027',
    tags: ['science'],
    endDays: 40,
    description: 'Resolves Yes if a Starship vehicle completes at least one full orbit before January 1, 2027.',
    source: 'https://www.spacex.com/launches/',
    markets: [{ question: 'Will Starship complete an orbit before 2027?', yes: 0.55 }],
  },
  {
    title: 'Will a room-temperature superconductor be replicated in 2027?',
    slug: 'room-temperature-superconductor-2027',
    tags: ['science'],
    endDays: 400,
    description: 'Resolves Yes if a peer-reviewed replication of an ambient-pressure room-temperature superconductor is published in 2027.',
    source: 'https://www.nature.com',
    markets: [{ question: 'Room-temperature superconductor replicated in 2027?', yes: 0.04, tick: '0.001' }],
  },
  {
    title: 'Best Picture at the 2027 Oscars',
    slug: 'oscars-2027-best-picture',
    tags: ['culture'],
    endDays: 120,
    negRisk: true,
    description: 'Resolves to the film that wins Best Picture at the 99th Academy Awards.',
    source: 'https://www.oscars.org',
    markets: field((film) => `Will ${film === 'Other' ? 'another film' : film} win Best Picture at the 2027 Oscars?`, [
      ['One Battle After Another', 0.35],
      ['Hamnet', 0.25],
      ['Marty Supreme', 0.15],
      ['Other', 0.25],
    ]),
  },
  {
    title: 'Will Taylor Swift announce a new album before March?',
    slug: 'taylor-swift-new-album-before-march',
    tags: ['culture'],
    endDays: 100,
    description: 'Resolves Yes if Taylor Swift officially announces a new studio album before March 1, 2027.',
    source: 'https://www.taylorswift.com',
    markets: [{ question: 'New Taylor Swift album announced before March 2027?', yes: 0.33 }],
  },
  {
    title: 'Super Bowl LXI Winner',
    slug: 'super-bowl-lxi-winner',
    tags: ['sports'],
    endDays: 80,
    negRisk: true,
    description: 'Resolves to the team that wins Super Bowl LXI.',
    source: 'https://www.nfl.com',
    markets: field((team) => `Will the ${team === 'Other' ? 'field (any other team)' : team} win Super Bowl LXI?`, [
      ['Kansas City Chiefs', 0.2],
      ['Philadelphia Eagles', 0.18],
      ['Detroit Lions', 0.14],
      ['Other', 0.48],
    ]),
  },
  {
    title: 'Will the Champions League final be won on penalties?',
    slug: 'champions-league-final-penalties-2027',
    tags: ['sports'],
    endDays: 190,
    creator: 'acme-markets',
    description: 'Resolves Yes if the 2027 UEFA Champions League final is decided by a penalty shoot-out.',
    source: 'https://www.uefa.com',
    markets: [{ question: 'Champions League 2027 final decided on penalties?', yes: 0.2 }],
  },
  {
    title: 'Will Solana ETF inflows top $1B in 2026?',
    slug: 'solana-etf-inflows-1b-2026',
    tags: ['crypto'],
    endDays: 40,
    creator: 'acme-markets',
    description: 'Resolves Yes if cumulative net inflows into US spot Solana ETFs exceed $1 billion in 2026.',
    source: 'https://farside.co.uk',
    markets: [{ question: 'Solana ETF net inflows above $1B in 2026?', yes: 0.5, rewards: 5 }],
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
];;
