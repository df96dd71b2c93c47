/**
 * Catalog metadata of the markets the wallet data shows (title, slugs, icon, end date, outcome labels,
 * seed prices, neg-risk flag), read through the catalog once and kept per market, with its text fields
 * escaped once as JSON (answers are written as text, not stringified).
 *
 * An entry lives META_TTL_MS (jittered between half and all of it: event-level edits such as an event
 * slug are not announced). Once expired it is re-read only if the catalog was written since it was read
 * (its generation moved), and an entry re-read unchanged stays the same object, so nothing written from
 * it is written again: rows and rendered trades compare their entry by identity. Markets the catalog
 * announces (`announce`) expire at once and are logged, so that the wallet views re-check their rows of
 * those markets at their next request (wallet-views.ts, checkMeta).
 */
import { formatAsset } from '../../domain/ids.ts';
import { DEFAULT_OUTCOMES } from '../../domain/market-rules.ts';
import { UNITS_PER_PIP, parsePips } from '../../domain/units.ts';
import type { Store } from '../../journal/env.ts';
import { catalogMetaKeys } from '../../journal/keys.ts';
import type { EventRec, MarketRec } from '../../projections/catalog/catalog-index.ts';
import type { CatalogReader } from '../catalog.ts';

/** Lifetime of a catalog metadata entry (jittered between half and all of it). */
export const META_TTL_MS = 30_000;
const META_CACHE_LIMIT = 200_000;
/** Markets announced by the catalog remembered for views to catch up on. */
const CHANGED_MARKETS_LIMIT = 100_000;

export interface MarketMeta {
  title: string;
  /** Lowercase title for the case-insensitive filter and sort. */
  titleLower: string;
  slug: string;
  eventSlug: string;
  icon: string;
  endDate: string;
  /** ms of endDate; NaN when none. */
  endMs: number;
  outcomes: readonly [string, string];
  /** Imported seed prices in micro-USDC, -1 when none. */
  seed: [number, number];
  negRisk: boolean;
  expiresAt: number;
  /** The catalog's generation when it was read: while no catalog write has happened since, it is current. */
  generation: number;
  /** The text fields as JSON strings, escaped once. */
  json: {
    title: string;
    slug: string;
    icon: string;
    eventSlug: string;
    endDate: string;
    outcomes: [string, string];
    conditionId: string;
    /** `<conditionId>:<outcome>` of each outcome. */
    assets: [string, string];
  };
}

/** Same metadata, field by field (`expiresAt` aside). */
function sameMeta(a: MarketMeta, b: MarketMeta): boolean {
  const x = a.json;
  const y = b.json;
  return (
    x.title === y.title && x.slug === y.slug && x.icon === y.icon && x.eventSlug === y.eventSlug && x.endDate === y.endDate &&
    x.outcomes[0] === y.outcomes[0] && x.outcomes[1] === y.outcomes[1] && a.seed[0] === b.seed[0] && a.seed[1] === b.seed[1] && a.negRisk === b.negRisk
  );
}

const jitteredExpiry = (now: number) => now + META_TTL_MS * (0.5 + Math.random() * 0.5);

export class MarketMetas {
  private readonly entries = new Map<string, MarketMeta>();
  /** Markets the catalog announced changes of, oldest first; `base` is the position of the first one kept. */
  private readonly log: string[] = [];
  private base = 0;

  constructor(
    private readonly store: Store,
    private readonly catalog: CatalogReader,
  ) {}

  /** Position just past the last announcement: a view that has looked up to here has seen them all. */
  get announced(): number {
    return this.base + this.log.length;
  }

  /** Position of the oldest announcement still remembered (the log is trimmed). */
  get oldestAnnounced(): number {
    return this.base;
  }

  /** The market of the announcement at `position` (oldestAnnounced <= position < announced). */
  announcedAt(position: number): string {
    return this.log[position - this.base];
  }

  /** The catalog changed these markets: their entries expire now and the change is logged for the views. */
  announce(conditionIds: readonly string[]): void {
    for (const raw of conditionIds) {
      const c = raw.toLowerCase();
      const m = this.entries.get(c);
      if (m !== undefined) m.expiresAt = -Infinity;
      this.log.push(c);
    }
    if (this.log.length > CHANGED_MARKETS_LIMIT) {
      // A view that has not looked since then re-checks all its rows.
      const drop = this.log.length >> 1;
      this.log.splice(0, drop);
      this.base += drop;
    }
  }

  /** The market's metadata: the cached entry while it is current (see the module header), else read again. */
  get(conditionId: string, now: number): MarketMeta {
    const cached = this.entries.get(conditionId);
    if (cached !== undefined && now < cached.expiresAt) return cached;
    // Every catalog write transaction bumps the generation (projections/catalog.ts), in this process or an
    // import beside it: an expired entry read under the current one is current, and re-reading it (an index
    // lookup and two decodes, ~100-200 µs) would only find it unchanged.
    const generation = (this.store.catalog.get(catalogMetaKeys.generation) as number | undefined) ?? 0;
    if (cached !== undefined && cached.generation === generation) {
      cached.expiresAt = jitteredExpiry(now);
      return cached;
    }
    const meta = this.read(conditionId, now, generation);
    if (cached !== undefined && sameMeta(cached, meta)) {
      // Unchanged: the same object, so that nothing written from it is written again.
      cached.expiresAt = meta.expiresAt;
      cached.generation = generation;
      return cached;
    }
    if (this.entries.size >= META_CACHE_LIMIT) this.entries.clear();
    this.entries.set(conditionId, meta);
    return meta;
  }

  private read(conditionId: string, now: number, generation: number): MarketMeta {
    const m = this.catalog.marketByCondition(conditionId);
    const e = m ? this.catalog.event(m.eventId) : undefined;
    return marketMetaOf(conditionId, m, e, jitteredExpiry(now), generation);
  }
}

/** A market's metadata from its catalog records (undefined for a market the catalog does not hold). */
export function marketMetaOf(conditionId: string, m: MarketRec | undefined, e: EventRec | undefined, expiresAt: number, generation: number): MarketMeta {
  const endDate = m?.endDate || e?.endDate || '';
  const seedOf = (i: 0 | 1): number => {
    const text = m?.outcomePrices[i];
    const pips = text === undefined ? undefined : parsePips(text);
    return pips === undefined ? -1 : pips * UNITS_PER_PIP;
  };
  const title = m?.question ?? '';
  const slug = m?.slug ?? '';
  const eventSlug = e?.slug ?? '';
  const icon = m?.icon || e?.icon || '';
  const outcomes: readonly [string, string] = m ? [m.outcomes[0], m.outcomes[1]] : DEFAULT_OUTCOMES;
  const q = JSON.stringify;
  return {
    title,
    titleLower: title.toLowerCase(),
    slug,
    eventSlug,
    icon,
    endDate,
    endMs: endDate === '' ? NaN : Date.parse(endDate),
    outcomes,
    seed: [seedOf(0), seedOf(1)],
    negRisk: m?.negRisk ?? false,
    expiresAt,
    generation,
    json: {
      title: q(title),
      slug: q(slug),
      icon: q(icon),
      eventSlug: q(eventSlug),
      endDate: q(endDate),
      outcomes: [q(outcomes[0]), q(outcomes[1])],
      conditionId: q(conditionId),
      assets: [q(formatAsset(conditionId, 0)), q(formatAsset(conditionId, 1))],
    },
  };
}
