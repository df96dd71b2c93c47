/**
 * The catalog's stored shapes and the index entries derived from them. Both sides use this module: the
 * writer (projections/catalog.ts) to maintain the entries of a record, the reader (queries/catalog.ts)
 * to know which range answers a query. Key shapes themselves are built only by journal/keys.ts.
 *
 * Index model (db `indexes`, see catalogIx in keys.ts):
 *
 *   scope    which events a range holds: `all`, `c:<creator>`, `t:<tagId>`, `s:<seriesId>`, and for
 *            events with a creator `ct:<tagId>:<creator>` and `cs:<seriesId>:<creator>`, so that one
 *            site's tag page is one range, not a filter over every event of the tag.
 *   status   active << 2 | closed << 1 | archived. A status filter selects 1, 2, 4 or 8 codes; the
 *            reader merges their ranges (k <= 8) and skips codes whose count is zero.
 *   column   each sortable field has its own ordered range per (scope, status); the value is a number
 *            (ids, dates as epoch ms) or a lowercase prefix of at most SORT_PREFIX code points of a text
 *            field. Rows whose prefixes tie are ordered in memory by the full value (a "tie group").
 *
 *   Per event: |scopes| x |status| (one) x |columns| entries; |scopes| = 1 + tags + series (+ the same
 *   again, plus one, with a creator). Counts per (scope, status) live in db `catalog` (catalogMetaKeys).
 *
 *   search   postings [scope(all | c:<creator>), term, eventId, weight, open]: weight 3 for a term of the
 *            title, 2 of a tag label, 1 of a market question; `open` (not closed) breaks score ties.
 *            Query words match terms by prefix, so the range of a word is every term it starts.
 */
import type { CatalogKind } from '../../journal/keys.ts';
import type { TickSize } from '../../domain/units.ts';

// ---- stored records (db `catalog`, key [kind, id]) --------------------------------------------------

/** Server-kept times of every record (ISO 8601): created once, updated when the content changes. */
interface Stamped {
  createdAt: string;
  updatedAt: string;
}

/** The status flags of series, events and markets (statusCode packs them). */
interface Flagged {
  active: boolean;
  closed: boolean;
  archived: boolean;
}

export interface TagRec extends Stamped {
  id: string;
  label: string;
  slug: string;
  requiresTranslation: boolean;
}

export interface SeriesRec extends Stamped, Flagged {
  id: string;
  ticker: string;
  slug: string;
  title: string;
  seriesType: string;
  recurrence: string;
  image: string;
  icon: string;
}

export interface EventRec extends Stamped, Flagged {
  id: string;
  ticker: string;
  slug: string;
  title: string;
  description: string;
  resolutionSource: string;
  image: string;
  icon: string;
  startDate: string;
  creationDate: string;
  endDate: string;
  negRisk: boolean;
  creator: string;
  tagIds: string[];
  seriesIds: string[];
  /** In the order they were first imported; markets are never removed from an event. */
  marketIds: string[];
  eventMetadata: Record<string, unknown>;
}

export interface ClobReward {
  assetAddress: string;
  rewardsDailyRate: number;
}

export interface MarketRec extends Stamped, Flagged {
  id: string;
  eventId: string;
  question: string;
  conditionId: string;
  questionID: string;
  slug: string;
  resolutionSource: string;
  image: string;
  icon: string;
  description: string;
  outcomes: [string, string];
  clobTokenIds: [string, string];
  /** Imported seed prices (minimal decimal strings), [] when none were given. */
  outcomePrices: string[];
  startDate: string;
  endDate: string;
  enableOrderBook: boolean;
  acceptingOrders: boolean;
  acceptingOrdersTimestamp: string;
  orderPriceMinTickSize: TickSize;
  /** Integer units (10^-6 token). */
  orderMinSize: number;
  negRisk: boolean;
  negRiskMarketID: string;
  negRiskRequestID: string;
  makerBaseFee: number;
  takerBaseFee: number;
  rewardsMinSize: number;
  rewardsMaxSpread: number;
  clobRewards: ClobReward[];
  creator: string;
  marketMakerAddress: string;
  gameStartTime: string;
  notificationsEnabled: boolean;
  groupItemTitle: string;
  rawMetadata: Record<string, unknown>;
  /** Winning outcome index once resolved, -1 before. */
  winner: -1 | 0 | 1;
  resolvedAt: string;
}

/** What the engine needs of a market (engine.registerMarket): domain/events.ts owns the shape. */
export type { TradingMarket } from '../../domain/events.ts';

export interface SearchDoc {
  /** [term, best weight] of every indexed term of the event. */
  terms: [string, number][];
  creator: string;
  open: number;
}

export type Kind = CatalogKind;

// ---- status and scopes ----------------------------------------------------------------------------

export const STATUS_CODES = [0, 1, 2, 3, 4, 5, 6, 7] as const;

export function statusCode(e: Flagged): number {
  return (e.active ? 4 : 0) | (e.closed ? 2 : 0) | (e.archived ? 1 : 0);
}

export const STATUS_BITS = { active: 4, closed: 2, archived: 1 } as const;
export type StatusFlag = keyof typeof STATUS_BITS;

/** Status codes consistent with the given flag filters. */
export function statusCodesFor(filter: Partial<Record<StatusFlag, boolean>>): number[] {
  return STATUS_CODES.filter((code) =>
    (Object.keys(STATUS_BITS) as StatusFlag[]).every((f) => filter[f] === undefined || ((code & STATUS_BITS[f]) !== 0) === filter[f]),
  );
}

export const scopeAll = 'all';
export const scopeCreator = (creator: string) => `c:${creator}`;
export const scopeTag = (tagId: string, creator?: string) => (creator ? `ct:${tagId}:${creator}` : `t:${tagId}`);
export const scopeSeries = (seriesId: string, creator?: string) => (creator ? `cs:${seriesId}:${creator}` : `s:${seriesId}`);

export function eventScopes(e: EventRec): string[] {
  const out = [scopeAll];
  for (const t of e.tagIds) out.push(scopeTag(t));
  for (const s of e.seriesIds) out.push(scopeSeries(s));
  if (e.creator) {
    out.push(scopeCreator(e.creator));
    for (const t of e.tagIds) out.push(scopeTag(t, e.creator));
    for (const s of e.seriesIds) out.push(scopeSeries(s, e.creator));
  }
  return out;
}

/** Market list scopes: every market, and one creator's markets. */
export function marketScopes(m: MarketRec): string[] {
  return m.creator ? [scopeAll, scopeCreator(m.creator)] : [scopeAll];
}

/** Search postings scopes. */
export function searchScopes(creator: string): string[] {
  return creator ? [scopeAll, scopeCreator(creator)] : [scopeAll];
}

// ---- sortable columns -----------------------------------------------------------------------------

/** Text sort keys keep this many code points; longer values tie in the index and sort in memory. */
export const SORT_PREFIX = 40;

export type ColumnKind = 'num' | 'date' | 'text';

export interface Column<R> {
  /** Short code used in index keys. */
  code: string;
  kind: ColumnKind;
  /** The field's value. */
  get(r: R): string;
}

function textKey(s: string): string {
  const lower = s.toLowerCase();
  if (lower.length <= SORT_PREFIX) return lower;
  return Array.from(lower).slice(0, SORT_PREFIX).join('');
}

/** The value a column contributes to an index key. */
export function indexValue(kind: ColumnKind, raw: string): string | number {
  switch (kind) {
    case 'num':
      return Number(raw);
    case 'date':
      return Date.parse(raw);
    case 'text':
      return textKey(raw);
  }
}

/** Ordered-binary order of strings is UTF-8 byte order = code point order (not UTF-16 unit order). */
export function compareText(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs === ys) return x - y;
    return xs ? 1 : -1;
  }
  return a.length - b.length;
}

export function compareIndexValues(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return compareText(String(a), String(b));
}

/** Full-value comparison used inside tie groups. */
export function compareFull(kind: ColumnKind, a: string, b: string): number {
  if (kind === 'text') {
    const c = compareText(a.toLowerCase(), b.toLowerCase());
    return c !== 0 ? c : compareText(a, b);
  }
  return (indexValue(kind, a) as number) - (indexValue(kind, b) as number);
}

// The fields events and tags both have sort alike in both: one column each, shared by the tables.
const ID: Column<{ id: string }> = { code: 'id', kind: 'num', get: (r) => r.id };
const SLUG: Column<{ slug: string }> = { code: 'sl', kind: 'text', get: (r) => r.slug };
const CREATED_AT: Column<Stamped> = { code: 'ca', kind: 'date', get: (r) => r.createdAt };
const UPDATED_AT: Column<Stamped> = { code: 'ua', kind: 'date', get: (r) => r.updatedAt };

export const EVENT_COLUMNS: Record<string, Column<EventRec>> = {
  id: ID,
  ticker: { code: 'tk', kind: 'text', get: (e) => e.ticker },
  slug: SLUG,
  title: { code: 'ti', kind: 'text', get: (e) => e.title },
  startDate: { code: 'sd', kind: 'date', get: (e) => e.startDate },
  endDate: { code: 'ed', kind: 'date', get: (e) => e.endDate },
  creationDate: { code: 'cd', kind: 'date', get: (e) => e.creationDate },
  createdAt: CREATED_AT,
  updatedAt: UPDATED_AT,
};

export const TAG_COLUMNS: Record<string, Column<TagRec>> = {
  id: ID,
  label: { code: 'lb', kind: 'text', get: (t) => t.label },
  slug: SLUG,
  createdAt: CREATED_AT,
  updatedAt: UPDATED_AT,
};

/** The platform's guide spells order fields in snake_case; clients use the JSON names. Both work. */
const ALIASES: Record<string, string> = {
  start_date: 'startDate',
  end_date: 'endDate',
  creation_date: 'creationDate',
  created_at: 'createdAt',
  updated_at: 'updatedAt',
};

export type OrderTerm<R> = { field: string; flag?: StatusFlag; column?: Column<R> };

/**
 * Parses `order` (comma-separated field names). Returns undefined when a name is not sortable.
 * Boolean status fields (events only) may appear anywhere; text, date and id columns come from `columns`.
 */
export function parseOrder<R>(text: string | undefined, columns: Record<string, Column<R>>, allowFlags: boolean): OrderTerm<R>[] | undefined {
  if (text === undefined) return [];
  const names = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (names.length === 0 || names.length > 8) return undefined;
  const out: OrderTerm<R>[] = [];
  for (const raw of names) {
    const name = ALIASES[raw] ?? raw;
    if (allowFlags && (name === 'active' || name === 'closed' || name === 'archived')) out.push({ field: name, flag: name });
    else if (Object.hasOwn(columns, name)) out.push({ field: name, column: columns[name] });
    else return undefined;
  }
  return out;
}

// ---- search terms ---------------------------------------------------------------------------------

/** A term longer than this is cut; query words are cut the same way so prefixes still meet. */
export const MAX_TERM = 40;

export const SEARCH_WEIGHT = { title: 3, tag: 2, question: 1 } as const;

const STOP_WORDS = new Set(['a', 'an', 'and', 'are', 'as', 'at', 'be', 'by', 'for', 'from', 'in', 'is', 'it', 'of', 'on', 'or', 'the', 'to', 'vs', 'will', 'with']);

/** Lowercase words without diacritics; single letters are dropped, single digits kept. */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const w of text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (w.length >= 2 || /^\d$/.test(w)) out.push(w.length > MAX_TERM ? w.slice(0, MAX_TERM) : w);
  }
  return out;
}

/** The words a query searches for: distinct, stop words dropped unless nothing else is left, at most 8. */
export function queryWords(q: string): string[] {
  const all = [...new Set(words(q))];
  const content = all.filter((w) => !STOP_WORDS.has(w));
  return (content.length > 0 ? content : all).slice(0, 8);
}

/** Every term of an event with its best weight. */
export function eventTerms(title: string, tagLabels: string[], questions: string[]): [string, number][] {
  const best = new Map<string, number>();
  const add = (text: string, w: number) => {
    for (const t of words(text)) if ((best.get(t) ?? 0) < w) best.set(t, w);
  };
  add(title, SEARCH_WEIGHT.title);
  for (const l of tagLabels) add(l, SEARCH_WEIGHT.tag);
  for (const q of questions) add(q, SEARCH_WEIGHT.question);
  return [...best].sort((a, b) => compareText(a[0], b[0]));
}

// ---- derived values -------------------------------------------------------------------------------

/** Sampling markets: liquidity rewards configured (a positive daily rate) and accepting orders. */
export function isSampling(m: MarketRec): boolean {
  return m.acceptingOrders && m.enableOrderBook && m.winner < 0 && m.clobRewards.some((r) => r.rewardsDailyRate > 0);
}

/** Whether the engine should take orders for the market now. */
export function tradable(m: MarketRec): boolean {
  return m.acceptingOrders && m.enableOrderBook && m.active && !m.closed && !m.archived && m.winner < 0;
}

export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 200)
    .replace(/-+$/, '');
}

/**
 * Structural equality for change detection (key order of objects does not matter, `undefined`
 * properties count as absent). Top-level keys listed in `ignore` are skipped.
 */
export function sameValue(a: unknown, b: unknown, ignore?: ReadonlySet<string>): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let nx = 0;
  for (const k in x) {
    if (x[k] === undefined || ignore?.has(k)) continue;
    nx++;
    if (!sameValue(x[k], y[k])) return false;
  }
  let ny = 0;
  for (const k in y) if (y[k] !== undefined && !ignore?.has(k)) ny++;
  return nx === ny;
}
