/**
 * The catalog's write side: validates admin upserts against the store, turns them into records, and
 * writes records and every index entry they imply in one LMDB transaction per request. All or nothing:
 * the plan is computed and checked inside the transaction (so no concurrent write can slip between the
 * check and the write) and nothing is written unless the whole request is valid; a fault while writing
 * aborts the child transaction, so a half-applied request cannot be committed either.
 *
 * Upsert semantics (docs/decisions.md, "Catalog"):
 *   - identity: `id` when given; else an event by slug, a market by condition id then slug, a tag or
 *     series by slug; else a new id from a per-kind sequence;
 *   - an input is the full desired state of the fields it covers: a missing optional field takes its
 *     documented default, not the stored value (server-managed fields such as createdAt and the
 *     resolution are kept);
 *   - markets are added to their event, never removed (trading state hangs off them); tags and series
 *     given with only `id`/`slug` are references and change nothing;
 *   - a record whose content did not change is not rewritten and keeps its updatedAt, so re-importing a
 *     file is a no-op that reports everything unchanged.
 *
 * Index entries are diffed (old record's keys vs new record's keys), so an update writes only what moved.
 */
import { encodePacked, hexToBigInt, keccak256 } from 'viem';
import { apiError, type ApiError } from '../domain/errors.ts';
import { parseTokenId, ZERO_ADDRESS } from '../domain/ids.ts';
import { DEFAULT_OUTCOMES, LOT_UNITS } from '../domain/market-rules.ts';
import { formatScaled, parseScaled, parseUnits, tickToPips, type TickSize, UNITS } from '../domain/units.ts';
import type { Store } from '../journal/env.ts';
import { catalogIx, catalogKey, catalogMetaKeys, profileKey, type CatalogKind, type Key } from '../journal/keys.ts';
import type { Clock } from '../runtime/clock.ts';
import type { EventInput, MarketInput, MarketStatusBody, Profile, ProfileBody, SeriesInput, TagInput } from '../edge/schemas/admin.ts';
import {
  EVENT_COLUMNS,
  TAG_COLUMNS,
  eventScopes,
  eventTerms,
  indexValue,
  isSampling,
  marketScopes,
  searchScopes,
  slugify,
  sameValue,
  statusCode,
  tradable,
  words,
  type EventRec,
  type MarketRec,
  type SearchDoc,
  type SeriesRec,
  type TagRec,
  type TradingMarket,
} from './catalog-index.ts';

export interface Problem {
  path: string;
  message: string;
}

export interface KindCounts {
  created: number;
  updated: number;
  unchanged: number;
}

export interface UpsertSummary {
  events: KindCounts;
  markets: KindCounts;
  tags: KindCounts;
  series: KindCounts;
}

export type UpsertOutcome =
  | { ok: true; eventIds: string[]; summary: UpsertSummary; changedMarkets: TradingMarket[] }
  | { ok: false; errors: Problem[] };

export type MarketsListener = (markets: TradingMarket[]) => void;

/** The oracle address in the derived condition id (no oracle contract exists here). */
export const CATALOG_ORACLE = ZERO_ADDRESS as `0x${string}`;
const DEFAULT_TICK: TickSize = '0.01';
const DEFAULT_MIN_SIZE_UNITS = 5 * UNITS;
const MAX_METADATA_CHARS = 16 * 1024;
const EMPTY = Buffer.alloc(0);
const IGNORE_UPDATED_AT: ReadonlySet<string> = new Set(['updatedAt']);

// ---- derivations (documented in docs/decisions.md) -------------------------------------------------

/** CTF's getConditionId(oracle, questionId, outcomeSlotCount = 2) with the catalog oracle. */
export function deriveConditionId(questionID: string): string {
  return keccak256(encodePacked(['address', 'bytes32', 'uint256'], [CATALOG_ORACLE, questionID as `0x${string}`, 2n]));
}

/** uint256(keccak256(abi.encodePacked(bytes32 conditionId, uint8 outcomeIndex))) in decimal. */
export function deriveTokenId(conditionId: string, outcomeIndex: 0 | 1): string {
  return hexToBigInt(keccak256(encodePacked(['bytes32', 'uint8'], [conditionId as `0x${string}`, outcomeIndex]))).toString();
}

/** The neg-risk group id of an event when the import names none. */
export function deriveNegRiskMarketId(eventId: string): string {
  return keccak256(encodePacked(['string', 'uint256'], ['pm-exchange/neg-risk', BigInt(eventId)]));
}

export function toTradingMarket(m: MarketRec): TradingMarket {
  return {
    conditionId: m.conditionId,
    tokenIds: [m.clobTokenIds[0], m.clobTokenIds[1]],
    tickPips: tickToPips(m.orderPriceMinTickSize),
    minSizeUnits: m.orderMinSize,
    makerFeeBps: m.makerBaseFee,
    takerFeeBps: m.takerBaseFee,
    acceptingOrders: tradable(m),
    negRisk: m.negRisk,
  };
}

// ---- input normalization helpers -------------------------------------------------------------------

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** ISO 8601 text -> normalized UTC ISO string; a time without a zone is UTC (never the server's zone). */
export function normalizeIso(text: string): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (y < 1900 || mo < 1 || mo > 12 || d < 1 || d > (mo === 2 && !leap ? 28 : DAYS[mo - 1])) return undefined;
  let t = text.replace(' ', 'T');
  if (t.includes('T') && !/(Z|[+-]\d{2}:?\d{2})$/.test(t)) t += 'Z';
  t = t.replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const ms = Date.parse(t);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

const present = <T>(v: T | null | undefined): v is T => v !== null && v !== undefined;
/** For fields the catalog answers as "" when unset: "" is absent too, so an answer can be re-imported. */
const given = (v: string | null | undefined): v is string => v !== null && v !== undefined && v !== '';

function normalizeCreator(c: string | null | undefined): string | undefined {
  if (!given(c)) return undefined;
  return /^0x[0-9a-fA-F]{40}$/.test(c) ? c.toLowerCase() : c;
}

function idText(id: string | number | null | undefined): string | undefined {
  return present(id) ? String(id) : undefined;
}

/** A JSON-encoded string array or a plain array (DESIGN section 9). */
function stringPair(v: string | unknown[], path: string, problems: Problem[]): unknown[] | undefined {
  let arr: unknown = v;
  if (typeof v === 'string') {
    try {
      arr = JSON.parse(v);
    } catch {
      problems.push({ path, message: 'must be a JSON-encoded array of two values' });
      return undefined;
    }
  }
  if (!Array.isArray(arr) || arr.length !== 2) {
    problems.push({ path, message: 'must hold exactly two values' });
    return undefined;
  }
  return arr;
}

// ---- reading helpers (inside or outside a transaction) --------------------------------------------

function getRec<R>(store: Store, kind: CatalogKind, id: string): R | undefined {
  return store.catalog.get(catalogKey(kind, id)) as R | undefined;
}

/** The id at the end of the first key of an index range (unique indexes: slug, condition, token). */
export function firstIndexedId(store: Store, range: { start: Key; end: Key }): string | undefined {
  for (const key of store.indexes.getKeys({ start: range.start, end: range.end, limit: 1 })) {
    return String((key as Key)[(key as Key).length - 1]);
  }
  return undefined;
}

const eventIdBySlug = (store: Store, slug: string) => firstIndexedId(store, catalogIx.eventSlugRange(slug));
const marketIdBySlug = (store: Store, slug: string) => firstIndexedId(store, catalogIx.marketSlugRange(slug));
const marketIdByCondition = (store: Store, c: string) => firstIndexedId(store, catalogIx.marketConditionRange(c));
const marketIdByToken = (store: Store, t: string) => firstIndexedId(store, catalogIx.marketTokenRange(t));
const tagIdBySlug = (store: Store, slug: string) => firstIndexedId(store, catalogIx.tagSlugRange(slug));
const seriesIdBySlug = (store: Store, slug: string) => firstIndexedId(store, catalogIx.seriesSlugRange(slug));

// ---- index entries of each record -----------------------------------------------------------------

function eventKeys(e: EventRec): Key[] {
  const id = Number(e.id);
  const status = statusCode(e);
  const keys: Key[] = [catalogIx.eventSlug(e.slug, id)];
  const columns = Object.values(EVENT_COLUMNS).map((c) => [c.code, indexValue(c.kind, c.get(e))] as const);
  for (const scope of eventScopes(e)) {
    for (const [code, value] of columns) keys.push(catalogIx.eventSort(scope, status, code, value, id));
  }
  return keys;
}

function eventCountKeys(e: EventRec): Key[] {
  const status = statusCode(e);
  return eventScopes(e).map((s) => catalogMetaKeys.count(s, status));
}

function marketKeys(m: MarketRec): Key[] {
  const id = Number(m.id);
  const keys: Key[] = [
    catalogIx.marketSlug(m.slug, id),
    catalogIx.marketCondition(m.conditionId, id),
    catalogIx.marketToken(m.clobTokenIds[0], id),
    catalogIx.marketToken(m.clobTokenIds[1], id),
  ];
  const sampling = isSampling(m);
  for (const scope of marketScopes(m)) {
    keys.push(catalogIx.marketList(scope, id));
    if (sampling) keys.push(catalogIx.marketSampling(scope, id));
  }
  return keys;
}

function tagKeys(t: TagRec): Key[] {
  const id = Number(t.id);
  const keys: Key[] = [catalogIx.tagSlug(t.slug, id)];
  for (const c of Object.values(TAG_COLUMNS)) keys.push(catalogIx.tagSort(c.code, indexValue(c.kind, c.get(t)), id));
  for (const term of new Set(words(t.label))) keys.push(catalogIx.tagTerm(term, id));
  return keys;
}

function seriesKeys(s: SeriesRec): Key[] {
  return [catalogIx.seriesSlug(s.slug, Number(s.id))];
}

function postingKeys(eventId: string, doc: SearchDoc): Key[] {
  const id = Number(eventId);
  const keys: Key[] = [];
  for (const scope of searchScopes(doc.creator)) {
    for (const [term, weight] of doc.terms) keys.push(catalogIx.eventTerm(scope, term, id, weight, doc.open));
  }
  return keys;
}

/** Removes the keys only `before` has and adds the keys only `after` has. */
function diffKeys(store: Store, before: Key[], after: Key[]): void {
  if (before.length === 0) {
    for (const k of after) store.indexes.put(k, EMPTY);
    return;
  }
  const next = new Map(after.map((k) => [JSON.stringify(k), k]));
  for (const k of before) {
    const s = JSON.stringify(k);
    if (next.has(s)) next.delete(s);
    else store.indexes.remove(k);
  }
  for (const k of next.values()) store.indexes.put(k, EMPTY);
}

// ---- planning ---------------------------------------------------------------------------------------

interface Planned<R> {
  old: R | undefined;
  next: R;
  path: string;
  changed: boolean;
}

interface Plan {
  errors: Problem[];
  tags: Map<string, Planned<TagRec>>;
  series: Map<string, Planned<SeriesRec>>;
  events: Map<string, Planned<EventRec>>;
  markets: Map<string, Planned<MarketRec>>;
  eventOrder: string[];
}

type Counter = { floor: number; next: number | undefined };

/**
 * Builds the records an upsert request asks for and every problem with it. Reads the store (the
 * transaction's view when called inside one), writes nothing.
 */
class Planner {
  readonly plan: Plan = { errors: [], tags: new Map(), series: new Map(), events: new Map(), markets: new Map(), eventOrder: [] };
  /** `${kind}:${slug}` (or `market-cond:<id>`) claimed by an id-less input earlier in the request. */
  private claims = new Map<string, string>();
  private counters = new Map<CatalogKind, Counter>();
  private tagRefs: { id: string; path: string; what: string }[] = [];
  /** Derived neg-risk group ids by event id (one hash per event, not per market). */
  private negRiskIds = new Map<string, string>();
  private seriesRefs: { id: string; path: string; what: string }[] = [];

  constructor(
    private readonly store: Store,
    private readonly now: string,
    private readonly tokenMemo: TokenMemo,
  ) {}

  private negRiskId(eventId: string): string {
    let id = this.negRiskIds.get(eventId);
    if (id === undefined) {
      id = deriveNegRiskMarketId(eventId);
      this.negRiskIds.set(eventId, id);
    }
    return id;
  }

  private problem(path: string, message: string): void {
    this.plan.errors.push({ path, message });
  }

  /** Explicit ids of the request raise the floor of new ids, so an assigned id never collides with one. */
  setIdFloors(floors: IdFloors): void {
    for (const [kind, floor] of Object.entries(floors) as [CatalogKind, number][]) {
      const c = this.counter(kind);
      c.floor = Math.max(c.floor, floor);
    }
  }

  private counter(kind: CatalogKind): Counter {
    let c = this.counters.get(kind);
    if (!c) {
      c = { floor: 1, next: undefined };
      this.counters.set(kind, c);
    }
    return c;
  }

  private allocate(kind: CatalogKind): string {
    const c = this.counter(kind);
    if (c.next === undefined) {
      const stored = this.store.catalog.get(catalogMetaKeys.nextId(kind));
      c.next = Math.max(typeof stored === 'number' ? stored : 1, c.floor);
    }
    // An explicit id stored earlier may sit above the sequence: skip ids that exist.
    while (getRec(this.store, kind, String(c.next)) !== undefined) c.next++;
    return String(c.next++);
  }

  private resolve(kind: CatalogKind, id: string | undefined, lookups: (string | undefined)[], byStore: ((v: string) => string | undefined)[]): string {
    if (id !== undefined) return id;
    for (let i = 0; i < lookups.length; i++) {
      const v = lookups[i];
      if (v === undefined) continue;
      const claimed = this.claims.get(`${kind}:${i}:${v}`);
      if (claimed) return claimed;
      const stored = byStore[i](v);
      if (stored) return stored;
    }
    const fresh = this.allocate(kind);
    for (let i = 0; i < lookups.length; i++) if (lookups[i] !== undefined) this.claims.set(`${kind}:${i}:${lookups[i]}`, fresh);
    return fresh;
  }

  private stamp<R extends { createdAt: string; updatedAt: string }>(next: R, old: R | undefined, updatedAt: string | undefined): boolean {
    if (old) {
      const same = sameValue(next, old, IGNORE_UPDATED_AT);
      next.updatedAt = updatedAt ?? (same ? old.updatedAt : this.now);
      return !same || next.updatedAt !== old.updatedAt;
    }
    next.updatedAt = updatedAt ?? this.now;
    return true;
  }

  private date(v: string | null | undefined, path: string): string | undefined {
    if (!given(v)) return undefined;
    const iso = normalizeIso(v);
    if (iso === undefined) this.problem(path, 'is not a valid ISO 8601 date');
    return iso;
  }

  private metadata(v: Record<string, unknown> | null | undefined, path: string): Record<string, unknown> {
    if (!present(v)) return {};
    if (JSON.stringify(v).length > MAX_METADATA_CHARS) this.problem(path, `is larger than ${MAX_METADATA_CHARS} characters`);
    return v;
  }

  tag(t: TagInput, path: string): string | undefined {
    const isRef = !present(t.label) && !present(t.requiresTranslation) && !present(t.createdAt) && !present(t.updatedAt);
    if (isRef && !present(t.id) && !present(t.slug)) {
      this.problem(path, 'a tag needs an id, a slug or a label');
      return undefined;
    }
    const slug = present(t.slug) ? t.slug : present(t.label) ? slugify(t.label) : undefined;
    if (slug === '') {
      this.problem(`${path}.slug`, 'cannot be derived from the label: give a slug');
      return undefined;
    }
    const id = this.resolve('tag', idText(t.id), [slug], [(s) => tagIdBySlug(this.store, s)]);
    if (isRef) {
      this.tagRefs.push({ id, path, what: present(t.slug) && !present(t.id) ? `tag with slug ${t.slug}` : `tag ${id}` });
      return id;
    }
    if (!present(t.label)) {
      this.problem(`${path}.label`, 'is required');
      return undefined;
    }
    const seen = this.plan.tags.get(id);
    const old = seen ? seen.old : getRec<TagRec>(this.store, 'tag', id);
    const createdAt = this.date(t.createdAt, `${path}.createdAt`) ?? old?.createdAt ?? this.now;
    const next: TagRec = { id, label: t.label, slug: slug!, requiresTranslation: t.requiresTranslation ?? false, createdAt, updatedAt: '' };
    const changed = this.stamp(next, old, this.date(t.updatedAt, `${path}.updatedAt`));
    if (seen) {
      if (!sameValue(seen.next, next)) this.problem(path, `tag ${id} is defined differently at ${seen.path}`);
      return id;
    }
    this.plan.tags.set(id, { old, next, path, changed });
    return id;
  }

  series(s: SeriesInput, path: string): string | undefined {
    const fields = ['ticker', 'title', 'seriesType', 'recurrence', 'image', 'icon', 'active', 'closed', 'archived', 'createdAt', 'updatedAt'] as const;
    const isRef = fields.every((f) => !present(s[f]));
    if (isRef && !present(s.id) && !present(s.slug)) {
      this.problem(path, 'a series needs an id, a slug or a title');
      return undefined;
    }
    const slug = present(s.slug) ? s.slug : present(s.title) ? slugify(s.title) : undefined;
    if (slug === '') {
      this.problem(`${path}.slug`, 'cannot be derived from the title: give a slug');
      return undefined;
    }
    const id = this.resolve('series', idText(s.id), [slug], [(v) => seriesIdBySlug(this.store, v)]);
    if (isRef) {
      this.seriesRefs.push({ id, path, what: present(s.slug) && !present(s.id) ? `series with slug ${s.slug}` : `series ${id}` });
      return id;
    }
    if (!present(s.title)) {
      this.problem(`${path}.title`, 'is required');
      return undefined;
    }
    const seen = this.plan.series.get(id);
    const old = seen ? seen.old : getRec<SeriesRec>(this.store, 'series', id);
    const next: SeriesRec = {
      id,
      ticker: s.ticker ?? slug!,
      slug: slug!,
      title: s.title,
      seriesType: s.seriesType ?? 'single',
      recurrence: s.recurrence ?? 'none',
      image: s.image ?? '',
      icon: s.icon ?? '',
      active: s.active ?? true,
      closed: s.closed ?? false,
      archived: s.archived ?? false,
      createdAt: this.date(s.createdAt, `${path}.createdAt`) ?? old?.createdAt ?? this.now,
      updatedAt: '',
    };
    const changed = this.stamp(next, old, this.date(s.updatedAt, `${path}.updatedAt`));
    if (seen) {
      if (!sameValue(seen.next, next)) this.problem(path, `series ${id} is defined differently at ${seen.path}`);
      return id;
    }
    this.plan.series.set(id, { old, next, path, changed });
    return id;
  }

  event(ev: EventInput, path: string): void {
    const slug = present(ev.slug) ? ev.slug : slugify(ev.title);
    if (slug === '') {
      this.problem(`${path}.slug`, 'cannot be derived from the title: give a slug');
      return;
    }
    const id = this.resolve('event', idText(ev.id), [slug], [(s) => eventIdBySlug(this.store, s)]);
    const dup = this.plan.events.get(id);
    if (dup) {
      this.problem(path, `event ${id} is already given at ${dup.path}`);
      return;
    }
    const old = getRec<EventRec>(this.store, 'event', id);

    const tagIds: string[] = [];
    (ev.tags ?? []).forEach((t, j) => {
      const tid = this.tag(t, `${path}.tags[${j}]`);
      if (tid !== undefined && !tagIds.includes(tid)) tagIds.push(tid);
    });
    const seriesIds: string[] = [];
    (ev.series ?? []).forEach((s, j) => {
      const sid = this.series(s, `${path}.series[${j}]`);
      if (sid !== undefined && !seriesIds.includes(sid)) seriesIds.push(sid);
    });

    const createdAt = this.date(ev.createdAt, `${path}.createdAt`) ?? old?.createdAt ?? this.now;
    const creationDate = this.date(ev.creationDate, `${path}.creationDate`) ?? createdAt;
    const next: EventRec = {
      id,
      ticker: ev.ticker ?? slug,
      slug,
      title: ev.title,
      description: ev.description ?? '',
      resolutionSource: ev.resolutionSource ?? '',
      image: ev.image ?? '',
      icon: ev.icon ?? '',
      startDate: this.date(ev.startDate, `${path}.startDate`) ?? creationDate,
      creationDate,
      endDate: this.date(ev.endDate, `${path}.endDate`) ?? '',
      createdAt,
      updatedAt: '',
      active: ev.active ?? true,
      closed: ev.closed ?? false,
      archived: ev.archived ?? false,
      negRisk: ev.negRisk ?? false,
      creator: normalizeCreator(ev.creator) ?? '',
      tagIds,
      seriesIds,
      marketIds: [...(old?.marketIds ?? [])],
      eventMetadata: this.metadata(ev.eventMetadata, `${path}.eventMetadata`),
    };
    this.plan.events.set(id, { old, next, path, changed: false });
    this.plan.eventOrder.push(id);

    (ev.markets ?? []).forEach((m, k) => {
      const mid = this.market(m, next, `${path}.markets[${k}]`);
      if (mid !== undefined && !next.marketIds.includes(mid)) next.marketIds.push(mid);
    });
    const planned = this.plan.events.get(id)!;
    planned.changed = this.stamp(next, old, this.date(ev.updatedAt, `${path}.updatedAt`));
  }

  market(m: MarketInput, ev: EventRec, path: string): string | undefined {
    const problems = this.plan.errors;
    const questionID = given(m.questionID) ? m.questionID.toLowerCase() : undefined;
    let conditionId = present(m.conditionId) ? m.conditionId.toLowerCase() : questionID ? deriveConditionId(questionID) : undefined;
    const slug = present(m.slug) ? m.slug : slugify(m.question);
    if (slug === '') {
      this.problem(`${path}.slug`, 'cannot be derived from the question: give a slug');
      return undefined;
    }
    const id = this.resolve('market', idText(m.id), [conditionId, slug], [
      (c) => marketIdByCondition(this.store, c),
      (s) => marketIdBySlug(this.store, s),
    ]);
    const dup = this.plan.markets.get(id);
    if (dup) {
      this.problem(path, `market ${id} is already given at ${dup.path}`);
      return undefined;
    }
    const old = getRec<MarketRec>(this.store, 'market', id);
    conditionId ??= old?.conditionId;
    if (conditionId === undefined) {
      this.problem(`${path}.conditionId`, 'is required (or give questionID to derive it)');
      return undefined;
    }
    if (old && old.conditionId !== conditionId) this.problem(`${path}.conditionId`, `market ${id} has condition id ${old.conditionId}; it cannot change`);
    if (old && old.eventId !== ev.id) this.problem(path, `market ${id} belongs to event ${old.eventId}`);

    let outcomes: [string, string] = [DEFAULT_OUTCOMES[0], DEFAULT_OUTCOMES[1]];
    if (present(m.outcomes)) {
      const pair = stringPair(m.outcomes, `${path}.outcomes`, problems);
      if (pair) {
        if (pair.every((o) => typeof o === 'string' && o.trim() !== '' && o.length <= 100) && pair[0] !== pair[1]) outcomes = pair as [string, string];
        else this.problem(`${path}.outcomes`, 'must be two different non-empty labels of at most 100 characters');
      }
    }

    let clobTokenIds: [string, string] = old?.clobTokenIds ?? this.tokenMemo.get(conditionId);
    if (present(m.clobTokenIds)) {
      const pair = stringPair(m.clobTokenIds, `${path}.clobTokenIds`, problems);
      if (pair) {
        const ids = pair.map((t) => (typeof t === 'string' ? parseTokenId(t) : undefined));
        if (ids[0] === undefined || ids[1] === undefined || ids[0] === ids[1]) {
          this.problem(`${path}.clobTokenIds`, 'must be two different uint256 decimal strings');
        } else if (old && (old.clobTokenIds[0] !== ids[0] || old.clobTokenIds[1] !== ids[1])) {
          this.problem(`${path}.clobTokenIds`, `market ${id} has token ids ${JSON.stringify(old.clobTokenIds)}; they cannot change`);
        } else clobTokenIds = [ids[0], ids[1]];
      }
    }

    let outcomePrices: string[] = [];
    if (present(m.outcomePrices)) {
      const pair = stringPair(m.outcomePrices, `${path}.outcomePrices`, problems);
      if (pair) {
        const scaled = pair.map((p) => (typeof p === 'number' || typeof p === 'string' ? parseScaled(String(p), 6) : undefined));
        if (scaled.some((p) => p === undefined || p > UNITS)) this.problem(`${path}.outcomePrices`, 'must be two decimals in [0, 1] with at most 6 decimals');
        else outcomePrices = scaled.map((p) => formatScaled(p!, 6));
      }
    }

    const tick: TickSize = present(m.orderPriceMinTickSize) ? (String(m.orderPriceMinTickSize) as TickSize) : DEFAULT_TICK;
    let orderMinSize = DEFAULT_MIN_SIZE_UNITS;
    if (present(m.orderMinSize)) {
      const units = parseUnits(String(m.orderMinSize));
      if (units === undefined || units <= 0 || units % LOT_UNITS !== 0) this.problem(`${path}.orderMinSize`, 'must be a positive multiple of 0.01');
      else orderMinSize = units;
    }

    const negRisk = m.negRisk ?? ev.negRisk;
    if (negRisk !== ev.negRisk) this.problem(`${path}.negRisk`, `must equal the event's negRisk (${ev.negRisk})`);
    if (old && old.negRisk !== negRisk) this.problem(`${path}.negRisk`, `market ${id} was created with negRisk ${old.negRisk}; it cannot change`);
    const creator = normalizeCreator(m.creator) ?? ev.creator;
    if (creator !== ev.creator) this.problem(`${path}.creator`, `must equal the event's creator (${JSON.stringify(ev.creator)})`);

    const resolved = old !== undefined && old.winner >= 0;
    const active = m.active ?? true;
    const archived = m.archived ?? false;
    if (resolved && m.closed === false) this.problem(`${path}.closed`, `market ${id} is resolved; it stays closed`);
    const closed = resolved || (m.closed ?? false);
    const enableOrderBook = m.enableOrderBook ?? true;
    const canAccept = enableOrderBook && active && !closed && !archived;
    if (m.acceptingOrders === true && !canAccept) {
      this.problem(`${path}.acceptingOrders`, 'a market accepts orders only when it is active, not closed, not archived, not resolved and has an order book');
    }
    const acceptingOrders = m.acceptingOrders ?? canAccept;
    const acceptingOrdersTimestamp =
      this.date(m.acceptingOrdersTimestamp, `${path}.acceptingOrdersTimestamp`) ||
      old?.acceptingOrdersTimestamp ||
      (acceptingOrders ? this.now : '');

    const next: MarketRec = {
      id,
      eventId: ev.id,
      question: m.question,
      conditionId,
      questionID: questionID ?? '',
      slug,
      resolutionSource: m.resolutionSource ?? ev.resolutionSource,
      image: m.image ?? ev.image,
      icon: m.icon ?? ev.icon,
      description: m.description ?? ev.description,
      outcomes,
      clobTokenIds,
      outcomePrices,
      startDate: this.date(m.startDate, `${path}.startDate`) ?? ev.startDate,
      endDate: this.date(m.endDate, `${path}.endDate`) ?? ev.endDate,
      createdAt: this.date(m.createdAt, `${path}.createdAt`) ?? old?.createdAt ?? this.now,
      updatedAt: '',
      active,
      closed,
      archived,
      enableOrderBook,
      acceptingOrders,
      acceptingOrdersTimestamp,
      orderPriceMinTickSize: tick,
      orderMinSize,
      negRisk,
      negRiskMarketID: given(m.negRiskMarketID) ? m.negRiskMarketID.toLowerCase() : negRisk ? this.negRiskId(ev.id) : '',
      negRiskRequestID: m.negRiskRequestID ?? '',
      makerBaseFee: m.makerBaseFee ?? 0,
      takerBaseFee: m.takerBaseFee ?? 0,
      rewardsMinSize: m.rewardsMinSize ?? 0,
      rewardsMaxSpread: m.rewardsMaxSpread ?? 0,
      clobRewards: (m.clobRewards ?? []).map((r) => ({
        assetAddress: present(r.assetAddress) ? r.assetAddress.toLowerCase() : ZERO_ADDRESS,
        rewardsDailyRate: r.rewardsDailyRate,
      })),
      creator,
      marketMakerAddress: given(m.marketMakerAddress) ? m.marketMakerAddress.toLowerCase() : '',
      gameStartTime: this.date(m.gameStartTime, `${path}.gameStartTime`) ?? '',
      notificationsEnabled: m.notificationsEnabled ?? false,
      groupItemTitle: m.groupItemTitle ?? '',
      rawMetadata: this.metadata(m.rawMetadata, `${path}.rawMetadata`),
      winner: old?.winner ?? -1,
      resolvedAt: old?.resolvedAt ?? '',
    };
    const changed = this.stamp(next, old, this.date(m.updatedAt, `${path}.updatedAt`));
    this.plan.markets.set(id, { old, next, path, changed });
    return id;
  }

  /** Checks that need the whole request: references, and uniqueness of slugs, condition and token ids. */
  finish(): Plan {
    const { plan } = this;
    for (const r of this.tagRefs) {
      if (!plan.tags.has(r.id) && getRec(this.store, 'tag', r.id) === undefined) this.problem(r.path, `${r.what} does not exist`);
    }
    for (const r of this.seriesRefs) {
      if (!plan.series.has(r.id) && getRec(this.store, 'series', r.id) === undefined) this.problem(r.path, `${r.what} does not exist`);
    }
    const unique = <R extends { id: string }>(
      kind: string,
      planned: Map<string, Planned<R>>,
      field: string,
      values: (r: R) => string[],
      owner: (v: string) => string | undefined,
    ) => {
      const claimed = new Map<string, Planned<R>>();
      for (const p of planned.values()) {
        for (const v of values(p.next)) {
          const other = claimed.get(v);
          if (other && other.next.id !== p.next.id) this.problem(`${p.path}.${field}`, `${v} is also used by ${kind} ${other.next.id} at ${other.path}`);
          else claimed.set(v, p);
        }
      }
      for (const p of planned.values()) {
        // A stored record keeping its value owns it already (the index agrees with the record).
        const kept = p.old ? new Set(values(p.old)) : undefined;
        for (const v of values(p.next)) {
          if (kept?.has(v)) continue;
          const o = owner(v);
          if (o === undefined || o === p.next.id) continue;
          // The stored owner gives the value up in this very request.
          const moving = planned.get(o);
          if (moving && !values(moving.next).includes(v)) continue;
          this.problem(`${p.path}.${field}`, `${v} is already used by ${kind} ${o}`);
        }
      }
    };
    unique('event', plan.events, 'slug', (e) => [e.slug], (v) => eventIdBySlug(this.store, v));
    unique('tag', plan.tags, 'slug', (t) => [t.slug], (v) => tagIdBySlug(this.store, v));
    unique('series', plan.series, 'slug', (s) => [s.slug], (v) => seriesIdBySlug(this.store, v));
    unique('market', plan.markets, 'slug', (m) => [m.slug], (v) => marketIdBySlug(this.store, v));
    unique('market', plan.markets, 'conditionId', (m) => [m.conditionId], (v) => marketIdByCondition(this.store, v));
    unique('market', plan.markets, 'clobTokenIds', (m) => [...m.clobTokenIds], (v) => marketIdByToken(this.store, v));
    return plan;
  }
}

/** Lowest id each kind may assign (1 + the highest explicit id of the request or file). */
export type IdFloors = Partial<Record<CatalogKind, number>>;

/** The id floors of a request, or of a whole file imported in batches. */
export function explicitIdFloors(inputs: readonly EventInput[]): IdFloors {
  const floors: IdFloors = {};
  const bump = (kind: CatalogKind, id: string | number | null | undefined) => {
    if (present(id)) floors[kind] = Math.max(floors[kind] ?? 1, Number(id) + 1);
  };
  for (const ev of inputs) {
    bump('event', ev.id);
    for (const m of ev.markets ?? []) bump('market', m.id);
    for (const t of ev.tags ?? []) bump('tag', t.id);
    for (const s of ev.series ?? []) bump('series', s.id);
  }
  return floors;
}

/**
 * Derived token ids by condition id. keccak in JS costs ~10 us, and an import derives every new
 * market's ids twice (whole-file check, then its batch), so the writer keeps them; bounded by clearing.
 */
export class TokenMemo {
  private readonly map = new Map<string, [string, string]>();
  constructor(private readonly max = 1 << 18) {}
  get(conditionId: string): [string, string] {
    let ids = this.map.get(conditionId);
    if (!ids) {
      if (this.map.size >= this.max) this.map.clear();
      ids = [deriveTokenId(conditionId, 0), deriveTokenId(conditionId, 1)];
      this.map.set(conditionId, ids);
    }
    return ids;
  }
}

/**
 * Validates and plans an upsert against the store's current state (or the enclosing transaction's).
 * `floors` (default: the inputs' own) keep assigned ids above every explicit id: a file imported in
 * batches passes the whole file's, so an id assigned in an early batch never takes one a later batch names.
 */
export function planUpsert(store: Store, inputs: readonly EventInput[], nowIso: string, floors?: IdFloors, memo = new TokenMemo()): Plan {
  const planner = new Planner(store, nowIso, memo);
  planner.setIdFloors(floors ?? explicitIdFloors(inputs));
  inputs.forEach((ev, i) => planner.event(ev, `[${i}]`));
  return planner.finish();
}

function emptyCounts(): KindCounts {
  return { created: 0, updated: 0, unchanged: 0 };
}

function countPlanned<R>(planned: Map<string, Planned<R>>): KindCounts {
  const c = emptyCounts();
  for (const p of planned.values()) {
    if (!p.old) c.created++;
    else if (p.changed) c.updated++;
    else c.unchanged++;
  }
  return c;
}

export function summarize(plan: Plan): UpsertSummary {
  return { events: countPlanned(plan.events), markets: countPlanned(plan.markets), tags: countPlanned(plan.tags), series: countPlanned(plan.series) };
}

// ---- applying a plan (inside the transaction) ----------------------------------------------------

/** Marks the catalog changed, so every reader (this process or another) drops what it cached. */
function bumpGeneration(store: Store): void {
  const g = store.catalog.get(catalogMetaKeys.generation);
  store.catalog.put(catalogMetaKeys.generation, (typeof g === 'number' ? g : 0) + 1);
}

function bumpSequence(store: Store, kind: CatalogKind, ids: Iterable<string>): void {
  const key = catalogMetaKeys.nextId(kind);
  const stored = store.catalog.get(key);
  let next = typeof stored === 'number' ? stored : 1;
  const before = next;
  for (const id of ids) next = Math.max(next, Number(id) + 1);
  if (next !== before) store.catalog.put(key, next);
}

/** Per-(scope, status) count changes of one request, applied once per key at the end. */
class CountDeltas {
  private readonly deltas = new Map<string, { key: Key; d: number }>();

  add(keys: Key[], d: number): void {
    for (const key of keys) {
      const s = JSON.stringify(key);
      const e = this.deltas.get(s);
      if (e) e.d += d;
      else this.deltas.set(s, { key, d });
    }
  }

  apply(store: Store): void {
    for (const { key, d } of this.deltas.values()) {
      if (d === 0) continue;
      const n = ((store.catalog.get(key) as number | undefined) ?? 0) + d;
      if (n > 0) store.catalog.put(key, n);
      else store.catalog.remove(key);
    }
  }
}

function writeEvent(store: Store, old: EventRec | undefined, next: EventRec, counts: CountDeltas): void {
  store.catalog.put(catalogKey('event', next.id), next);
  diffKeys(store, old ? eventKeys(old) : [], eventKeys(next));
  if (old) counts.add(eventCountKeys(old), -1);
  counts.add(eventCountKeys(next), 1);
}

function writeMarket(store: Store, old: MarketRec | undefined, next: MarketRec): void {
  store.catalog.put(catalogKey('market', next.id), next);
  diffKeys(store, old ? marketKeys(old) : [], marketKeys(next));
}

/** Event ids carrying a tag (every status), through the tag's id-ordered ranges. */
function eventIdsWithTag(store: Store, tagId: string): string[] {
  const ids: string[] = [];
  for (let status = 0; status < 8; status++) {
    const range = catalogIx.eventSortRange(`t:${tagId}`, status, EVENT_COLUMNS.id.code);
    for (const key of store.indexes.getKeys(range)) ids.push(String((key as Key)[(key as Key).length - 1]));
  }
  return ids;
}

/** Recomputes an event's search document from the current (transaction) state and diffs its postings. */
function reindexSearch(store: Store, eventId: string): void {
  const e = getRec<EventRec>(store, 'event', eventId);
  if (!e) return;
  const labels = e.tagIds.map((t) => getRec<TagRec>(store, 'tag', t)?.label ?? '');
  const questions = e.marketIds.map((m) => getRec<MarketRec>(store, 'market', m)?.question ?? '');
  const doc: SearchDoc = { terms: eventTerms(e.title, labels, questions), creator: e.creator, open: e.closed ? 0 : 1 };
  const key = catalogMetaKeys.searchDoc(eventId);
  const old = store.catalog.get(key) as SearchDoc | undefined;
  if (old && sameValue(old, doc)) return;
  diffKeys(store, old ? postingKeys(eventId, old) : [], postingKeys(eventId, doc));
  store.catalog.put(key, doc);
}

function applyPlan(store: Store, plan: Plan): void {
  const reindex = new Set<string>();
  for (const { old, next, changed } of plan.tags.values()) {
    if (!changed) continue;
    store.catalog.put(catalogKey('tag', next.id), next);
    diffKeys(store, old ? tagKeys(old) : [], tagKeys(next));
    if (old && old.label !== next.label) for (const e of eventIdsWithTag(store, next.id)) reindex.add(e);
  }
  for (const { old, next, changed } of plan.series.values()) {
    if (!changed) continue;
    store.catalog.put(catalogKey('series', next.id), next);
    diffKeys(store, old ? seriesKeys(old) : [], seriesKeys(next));
  }
  for (const { old, next, changed } of plan.markets.values()) {
    if (!changed) continue;
    writeMarket(store, old, next);
    if (!old || old.question !== next.question) reindex.add(next.eventId);
  }
  const counts = new CountDeltas();
  for (const { old, next, changed } of plan.events.values()) {
    if (!changed) continue;
    writeEvent(store, old, next, counts);
    reindex.add(next.id);
  }
  counts.apply(store);
  for (const id of reindex) reindexSearch(store, id);
  const changed = [plan.tags, plan.series, plan.markets, plan.events].some((m) => [...m.values()].some((p) => p.changed));
  if (changed) bumpGeneration(store);
  bumpSequence(store, 'tag', plan.tags.keys());
  bumpSequence(store, 'series', plan.series.keys());
  bumpSequence(store, 'market', plan.markets.keys());
  bumpSequence(store, 'event', plan.events.keys());
}

// ---- the writer -------------------------------------------------------------------------------------

export type StatusOutcome = { ok: true; market: MarketRec } | { ok: false; error: ApiError };

export class CatalogWriter {
  private readonly listeners = new Set<MarketsListener>();
  private readonly tokenMemo = new TokenMemo();

  constructor(private readonly store: Store, private readonly clock: Clock) {}

  private nowIso(): string {
    return new Date(this.clock.now()).toISOString();
  }

  /** Called after each committed change with the markets whose record changed (engine registration). */
  onMarketsChanged(cb: MarketsListener): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  private notify(markets: TradingMarket[]): void {
    if (markets.length === 0) return;
    for (const cb of this.listeners) cb(markets);
  }

  /** Validates without writing: the problems, or what an upsert would change. */
  check(inputs: readonly EventInput[]): { ok: true; summary: UpsertSummary } | { ok: false; errors: Problem[] } {
    const plan = planUpsert(this.store, inputs, this.nowIso(), undefined, this.tokenMemo);
    return plan.errors.length > 0 ? { ok: false, errors: plan.errors } : { ok: true, summary: summarize(plan) };
  }

  /**
   * Upserts events with their markets, tags and series in one transaction: everything or nothing.
   * `floors`: see planUpsert (batched imports pass the whole file's).
   */
  async upsertEvents(inputs: readonly EventInput[], floors?: IdFloors): Promise<UpsertOutcome> {
    const now = this.nowIso();
    const outcome = (await this.store.root.childTransaction(() => {
      const plan = planUpsert(this.store, inputs, now, floors, this.tokenMemo);
      if (plan.errors.length > 0) return { ok: false, errors: plan.errors } satisfies UpsertOutcome;
      applyPlan(this.store, plan);
      const changedMarkets = [...plan.markets.values()].filter((p) => p.changed).map((p) => toTradingMarket(p.next));
      return { ok: true, eventIds: plan.eventOrder, summary: summarize(plan), changedMarkets } satisfies UpsertOutcome;
    })) as UpsertOutcome;
    if (outcome.ok) this.notify(outcome.changedMarkets);
    return outcome;
  }

  /** Flips status flags of a market; closing, archiving or deactivating also stops order intake. */
  async setMarketStatus(conditionId: string, patch: MarketStatusBody): Promise<StatusOutcome> {
    const now = this.nowIso();
    const outcome = (await this.store.root.childTransaction(() => {
      const id = marketIdByCondition(this.store, conditionId);
      const old = id === undefined ? undefined : getRec<MarketRec>(this.store, 'market', id);
      if (!old) return { ok: false, error: apiError('PM_ERR_ADMIN_MARKET_UNKNOWN', { conditionId }) } satisfies StatusOutcome;
      const resolved = old.winner >= 0;
      if (resolved && (patch.closed === false || patch.acceptingOrders === true)) {
        return { ok: false, error: apiError('PM_ERR_MARKET_RESOLVED', { conditionId }) } satisfies StatusOutcome;
      }
      const next: MarketRec = { ...old };
      if (patch.active !== undefined) next.active = patch.active;
      if (patch.closed !== undefined) next.closed = patch.closed;
      if (patch.archived !== undefined) next.archived = patch.archived;
      const canAccept = next.enableOrderBook && next.active && !next.closed && !next.archived;
      if (patch.acceptingOrders === true && !canAccept) {
        const message = 'a market accepts orders only when it is active, not closed, not archived and has an order book';
        return { ok: false, error: apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: [{ path: 'acceptingOrders', message }] }) } satisfies StatusOutcome;
      }
      next.acceptingOrders = patch.acceptingOrders ?? (next.acceptingOrders && canAccept);
      if (next.acceptingOrders && next.acceptingOrdersTimestamp === '') next.acceptingOrdersTimestamp = now;
      if (sameValue(next, old)) return { ok: true, market: old } satisfies StatusOutcome;
      next.updatedAt = now;
      writeMarket(this.store, old, next);
      bumpGeneration(this.store);
      return { ok: true, market: next } satisfies StatusOutcome;
    })) as StatusOutcome;
    if (outcome.ok) this.notify([toTradingMarket(outcome.market)]);
    return outcome;
  }

  /**
   * Records a resolution the engine has accepted: the market closes, stops taking orders and its
   * winning token is marked. Idempotent for the same winner.
   */
  async markResolved(conditionId: string, winner: 0 | 1): Promise<StatusOutcome> {
    const now = this.nowIso();
    const outcome = (await this.store.root.childTransaction(() => {
      const id = marketIdByCondition(this.store, conditionId);
      const old = id === undefined ? undefined : getRec<MarketRec>(this.store, 'market', id);
      if (!old) return { ok: false, error: apiError('PM_ERR_ADMIN_MARKET_UNKNOWN', { conditionId }) } satisfies StatusOutcome;
      if (old.winner >= 0) {
        return old.winner === winner
          ? ({ ok: true, market: old } satisfies StatusOutcome)
          : ({ ok: false, error: apiError('PM_ERR_MARKET_RESOLVED', { conditionId }) } satisfies StatusOutcome);
      }
      const next: MarketRec = { ...old, winner, closed: true, acceptingOrders: false, resolvedAt: now, updatedAt: now };
      writeMarket(this.store, old, next);
      bumpGeneration(this.store);
      return { ok: true, market: next } satisfies StatusOutcome;
    })) as StatusOutcome;
    if (outcome.ok) this.notify([toTradingMarket(outcome.market)]);
    return outcome;
  }

  /** Replaces a wallet's display profile (absent fields become ""). */
  async putProfile(address: string, body: ProfileBody): Promise<Profile> {
    const profile: Profile = {
      address,
      name: body.name ?? '',
      pseudonym: body.pseudonym ?? '',
      bio: body.bio ?? '',
      profileImage: body.profileImage ?? '',
      profileImageOptimized: body.profileImageOptimized ?? '',
    };
    await this.store.profiles.put(profileKey(address), profile);
    return profile;
  }
}
