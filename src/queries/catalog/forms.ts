/**
 * The wire forms of catalog records (edge/schemas/catalog.ts types them; test/queries/catalog.test.ts checks
 * each against its schema). Pure: what a form needs beyond its record (prices, tags, the event) is passed in.
 */
import { UNITS } from '../../domain/units.ts';
import type { EventListItem, EventSummary, MarketBook, MarketCatalog, SamplingMarket, SimplifiedMarket, Tag } from '../../edge/schemas/catalog.ts';
import type { EventRec, MarketRec, TagRec } from '../../projections/catalog/catalog-index.ts';

/**
 * Current price of a token by the rule of queries/current-price.ts (midpoint, last trade past a 0.10
 * spread, wide midpoint); undefined when the engine knows none.
 */
export type PriceSource = (tokenId: string) => number | undefined;

/** An event's fields shared by every form of it. */
type EventCore = Omit<EventSummary, 'creationDate'>;

export function tagForm(t: TagRec): Tag {
  return { id: t.id, label: t.label, slug: t.slug, requiresTranslation: t.requiresTranslation, createdAt: t.createdAt, updatedAt: t.updatedAt };
}

function eventCore(e: EventRec): EventCore {
  return {
    id: e.id,
    ticker: e.ticker,
    slug: e.slug,
    title: e.title,
    description: e.description,
    resolutionSource: e.resolutionSource,
    startDate: e.startDate,
    endDate: e.endDate,
    image: e.image,
    icon: e.icon,
    active: e.active,
    closed: e.closed,
    archived: e.archived,
    negRisk: e.negRisk,
    creator: e.creator,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  };
}

export function eventSummary(e: EventRec): EventSummary {
  return { ...eventCore(e), creationDate: e.creationDate };
}

export function eventListItem(e: EventRec, tags: Tag[]): EventListItem {
  return { ...eventCore(e), tags };
}

/** Price of outcome `i`: 1/0 once resolved, else the engine's price, else the imported seed, else 0. */
export function tokenPrice(m: MarketRec, i: 0 | 1, price: PriceSource): number {
  if (m.winner >= 0) return m.winner === i ? 1 : 0;
  const live = price(m.clobTokenIds[i]);
  if (live !== undefined) return live;
  const seed = m.outcomePrices[i];
  return seed === undefined ? 0 : Number(seed);
}

export function marketCatalog(m: MarketRec, price: PriceSource): MarketCatalog {
  return {
    id: m.id,
    question: m.question,
    conditionId: m.conditionId,
    questionID: m.questionID,
    slug: m.slug,
    resolutionSource: m.resolutionSource,
    image: m.image,
    icon: m.icon,
    description: m.description,
    outcomes: JSON.stringify(m.outcomes),
    outcomePrices: JSON.stringify([String(tokenPrice(m, 0, price)), String(tokenPrice(m, 1, price))]),
    clobTokenIds: JSON.stringify(m.clobTokenIds),
    startDate: m.startDate,
    endDate: m.endDate,
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
    active: m.active,
    closed: m.closed,
    archived: m.archived,
    enableOrderBook: m.enableOrderBook,
    acceptingOrders: m.acceptingOrders,
    acceptingOrdersTimestamp: m.acceptingOrdersTimestamp,
    orderPriceMinTickSize: Number(m.orderPriceMinTickSize),
    orderMinSize: m.orderMinSize / UNITS,
    negRisk: m.negRisk,
    negRiskMarketID: m.negRiskMarketID,
    negRiskRequestID: m.negRiskRequestID,
    makerBaseFee: m.makerBaseFee,
    takerBaseFee: m.takerBaseFee,
    rewardsMinSize: m.rewardsMinSize,
    rewardsMaxSpread: m.rewardsMaxSpread,
    clobRewards: m.clobRewards.map((r) => ({ assetAddress: r.assetAddress, rewardsDailyRate: r.rewardsDailyRate })),
    creator: m.creator,
    marketMakerAddress: m.marketMakerAddress,
    gameStartTime: m.gameStartTime,
    notificationsEnabled: m.notificationsEnabled,
    groupItemTitle: m.groupItemTitle,
    rawMetadata: m.rawMetadata,
  };
}

export function marketBook(m: MarketRec, price: PriceSource, tags: string[]): MarketBook {
  return {
    enable_order_book: m.enableOrderBook,
    active: m.active,
    closed: m.closed,
    archived: m.archived,
    accepting_orders: m.acceptingOrders,
    accepting_order_timestamp: m.acceptingOrdersTimestamp,
    minimum_order_size: m.orderMinSize / UNITS,
    minimum_tick_size: Number(m.orderPriceMinTickSize),
    condition_id: m.conditionId,
    question_id: m.questionID,
    question: m.question,
    description: m.description,
    market_slug: m.slug,
    end_date_iso: m.endDate,
    game_start_time: m.gameStartTime,
    seconds_delay: 0,
    fpmm: m.marketMakerAddress,
    maker_base_fee: m.makerBaseFee,
    taker_base_fee: m.takerBaseFee,
    notifications_enabled: m.notificationsEnabled,
    neg_risk: m.negRisk,
    neg_risk_market_id: m.negRiskMarketID,
    neg_risk_request_id: m.negRiskRequestID,
    icon: m.icon,
    image: m.image,
    rewards: {
      rates: m.clobRewards.map((r) => ({ asset_address: r.assetAddress, rewards_daily_rate: r.rewardsDailyRate })),
      min_size: m.rewardsMinSize,
      max_spread: m.rewardsMaxSpread,
    },
    is_50_50_outcome: false,
    tokens: ([0, 1] as const).map((i) => ({
      token_id: m.clobTokenIds[i],
      outcome: m.outcomes[i],
      price: tokenPrice(m, i, price),
      winner: m.winner === i,
    })),
    tags,
  };
}

/** The platform's short form: condition id, rewards, tokens with their prices, status flags. */
export function simplifiedMarket(m: MarketRec, price: PriceSource): SimplifiedMarket {
  const b = marketBook(m, price, []);
  return {
    condition_id: b.condition_id,
    rewards: b.rewards,
    tokens: b.tokens,
    active: b.active,
    closed: b.closed,
    archived: b.archived,
    accepting_orders: b.accepting_orders,
  };
}

function samplingStatus(m: MarketRec): SamplingMarket['status'] {
  if (m.winner >= 0) return 'resolved';
  if (m.closed) return 'closed';
  return m.acceptingOrders ? 'active' : 'paused';
}

export function samplingMarket(m: MarketRec, e: EventRec | undefined): SamplingMarket {
  return {
    condition_id: m.conditionId,
    status: samplingStatus(m),
    question: m.question,
    slug: m.slug,
    description: m.description,
    neg_risk: m.negRisk,
    market_id: Number(m.id),
    assets_ids: [...m.clobTokenIds],
    outcomes: [...m.outcomes],
    event: { id: e?.id ?? '', slug: e?.slug ?? '', title: e?.title ?? '', ticker: e?.ticker ?? '', description: e?.description ?? '' },
    raw_metadata: m.rawMetadata,
  };
}
