/**
 * Planning an upsert: builds the records a request asks for and every problem with it, reading the store
 * (the transaction's view when called inside one) and writing nothing. Upsert semantics: projections/catalog.ts.
 * Which id each input gets is id-allocator.ts's; the values that must be unique across the request and the
 * store are checked by unique-values.ts once every record is planned.
 */
import { ZERO_ADDRESS } from '../../domain/ids.ts';
import type { TickSize } from '../../domain/units.ts';
import type { Store } from '../../journal/env.ts';
import type { EventInput, MarketInput, SeriesInput, TagInput } from '../../edge/schemas/admin.ts';
import { sameValue, slugify, type EventRec, type MarketRec, type SeriesRec, type TagRec } from './catalog-index.ts';
import { deriveConditionId, deriveNegRiskMarketId, TokenMemo } from './derive.ts';
import { given, idText, normalizeCreator, normalizeIso, present, type Problem } from './input.ts';
import { IdAllocator, explicitIdFloors, type IdFloors } from './id-allocator.ts';
import { uniqueValueProblems } from './unique-values.ts';
import { minSizeOf, outcomesOf, pricesOf, tokenIdsOf } from './market-fields.ts';
import { eventIdBySlug, getRec, marketIdByCondition, marketIdBySlug, seriesIdBySlug, tagIdBySlug } from './lookups.ts';

export { explicitIdFloors, type IdFloors } from './id-allocator.ts';

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

const DEFAULT_TICK: TickSize = '0.01';
const MAX_METADATA_CHARS = 16 * 1024;
const IGNORE_UPDATED_AT: ReadonlySet<string> = new Set(['updatedAt']);

export interface Planned<R> {
  old: R | undefined;
  next: R;
  path: string;
  changed: boolean;
}

export interface Plan {
  errors: Problem[];
  tags: Map<string, Planned<TagRec>>;
  series: Map<string, Planned<SeriesRec>>;
  events: Map<string, Planned<EventRec>>;
  markets: Map<string, Planned<MarketRec>>;
  eventOrder: string[];
}

/** A reference to a tag or series, checked against the store and the request once the request is read. */
type Ref = { id: string; path: string; what: string };

type NamedInput = Pick<TagInput & SeriesInput, 'id' | 'slug' | 'createdAt' | 'updatedAt'> & { label?: string | null; title?: string | null };

/** What planning a tag and a series differ in. */
interface NamedKind<I extends NamedInput, R> {
  kind: 'tag' | 'series';
  /** The field that names the record and gives its slug when it has none. */
  name: 'label' | 'title';
  /** An input without the record's own fields: a reference. */
  isRef(input: I): boolean;
  planned: Map<string, Planned<R>>;
  refs: Ref[];
  idBySlug(store: Store, slug: string): string | undefined;
  build(input: I, id: string, slug: string, old: R | undefined, path: string): R;
}

const SERIES_FIELDS = ['ticker', 'title', 'seriesType', 'recurrence', 'image', 'icon', 'active', 'closed', 'archived', 'createdAt', 'updatedAt'] as const;

/**
 * Builds the records an upsert request asks for and every problem with it. Reads the store (the
 * transaction's view when called inside one), writes nothing.
 */
class Planner {
  readonly plan: Plan = { errors: [], tags: new Map(), series: new Map(), events: new Map(), markets: new Map(), eventOrder: [] };
  private readonly ids: IdAllocator;
  private tagRefs: Ref[] = [];
  /** Derived neg-risk group ids by event id (one hash per event, not per market). */
  private negRiskIds = new Map<string, string>();
  private seriesRefs: Ref[] = [];

  constructor(
    private readonly store: Store,
    private readonly now: string,
    private readonly tokenMemo: TokenMemo,
    floors: IdFloors,
  ) {
    this.ids = new IdAllocator(store, floors);
  }

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
    return this.named(this.tagKind, t, path);
  }

  series(s: SeriesInput, path: string): string | undefined {
    return this.named(this.seriesKind, s, path);
  }

  private readonly tagKind: NamedKind<TagInput, TagRec> = {
    kind: 'tag',
    name: 'label',
    isRef: (t) => !present(t.label) && !present(t.requiresTranslation) && !present(t.createdAt) && !present(t.updatedAt),
    planned: this.plan.tags,
    refs: this.tagRefs,
    idBySlug: tagIdBySlug,
    build: (t, id, slug, old, path) => {
      const createdAt = this.date(t.createdAt, `${path}.createdAt`) ?? old?.createdAt ?? this.now;
      return { id, label: t.label!, slug, requiresTranslation: t.requiresTranslation ?? false, createdAt, updatedAt: '' };
    },
  };

  private readonly seriesKind: NamedKind<SeriesInput, SeriesRec> = {
    kind: 'series',
    name: 'title',
    isRef: (s) => SERIES_FIELDS.every((f) => !present(s[f])),
    planned: this.plan.series,
    refs: this.seriesRefs,
    idBySlug: seriesIdBySlug,
    build: (s, id, slug, old, path) => ({
      id,
      ticker: s.ticker ?? slug,
      slug,
      title: s.title!,
      seriesType: s.seriesType ?? 'single',
      recurrence: s.recurrence ?? 'none',
      image: s.image ?? '',
      icon: s.icon ?? '',
      active: s.active ?? true,
      closed: s.closed ?? false,
      archived: s.archived ?? false,
      createdAt: this.date(s.createdAt, `${path}.createdAt`) ?? old?.createdAt ?? this.now,
      updatedAt: '',
    }),
  };

  /**
   * A tag or a series: a reference (id and/or slug only), checked once the request is read; or a
   * definition, planned once per id (a second definition in the request must be the same).
   */
  private named<I extends NamedInput, R extends TagRec | SeriesRec>(k: NamedKind<I, R>, input: I, path: string): string | undefined {
    const isRef = k.isRef(input);
    if (isRef && !present(input.id) && !present(input.slug)) {
      this.problem(path, `a ${k.kind} needs an id, a slug or a ${k.name}`);
      return undefined;
    }
    const name = input[k.name];
    const slug = present(input.slug) ? input.slug : present(name) ? slugify(name) : undefined;
    if (slug === '') {
      this.problem(`${path}.slug`, `cannot be derived from the ${k.name}: give a slug`);
      return undefined;
    }
    const id = this.ids.resolve(k.kind, idText(input.id), [slug], [(v) => k.idBySlug(this.store, v)]);
    if (isRef) {
      k.refs.push({ id, path, what: present(input.slug) && !present(input.id) ? `${k.kind} with slug ${input.slug}` : `${k.kind} ${id}` });
      return id;
    }
    if (!present(name)) {
      this.problem(`${path}.${k.name}`, 'is required');
      return undefined;
    }
    const seen = k.planned.get(id);
    const old = seen ? seen.old : getRec<R>(this.store, k.kind, id);
    const next = k.build(input, id, slug!, old, path);
    const changed = this.stamp(next, old, this.date(input.updatedAt, `${path}.updatedAt`));
    if (seen) {
      if (!sameValue(seen.next, next)) this.problem(path, `${k.kind} ${id} is defined differently at ${seen.path}`);
      return id;
    }
    k.planned.set(id, { old, next, path, changed });
    return id;
  }

  event(ev: EventInput, path: string): void {
    const slug = present(ev.slug) ? ev.slug : slugify(ev.title);
    if (slug === '') {
      this.problem(`${path}.slug`, 'cannot be derived from the title: give a slug');
      return;
    }
    const id = this.ids.resolve('event', idText(ev.id), [slug], [(s) => eventIdBySlug(this.store, s)]);
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
    const identity = this.marketIdentity(m, ev, path);
    if (identity === undefined) return undefined;
    const { id, old, conditionId, questionID, slug } = identity;
    const problems = this.plan.errors;
    const outcomes = outcomesOf(m, path, problems);
    const clobTokenIds = tokenIdsOf(m, id, old, old?.clobTokenIds ?? this.tokenMemo.get(conditionId), path, problems);
    const outcomePrices = pricesOf(m, path, problems);
    const tick: TickSize = present(m.orderPriceMinTickSize) ? (String(m.orderPriceMinTickSize) as TickSize) : DEFAULT_TICK;
    const orderMinSize = minSizeOf(m, path, problems);

    const negRisk = m.negRisk ?? ev.negRisk;
    if (negRisk !== ev.negRisk) this.problem(`${path}.negRisk`, `must equal the event's negRisk (${ev.negRisk})`);
    if (old && old.negRisk !== negRisk) this.problem(`${path}.negRisk`, `market ${id} was created with negRisk ${old.negRisk}; it cannot change`);
    const creator = normalizeCreator(m.creator) ?? ev.creator;
    if (creator !== ev.creator) this.problem(`${path}.creator`, `must equal the event's creator (${JSON.stringify(ev.creator)})`);
    const status = this.marketStatus(m, id, old, path);

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
      ...status,
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

  /** Which market an input is (id, else condition id, else slug) and what of it cannot change. */
  private marketIdentity(m: MarketInput, ev: EventRec, path: string) {
    const questionID = given(m.questionID) ? m.questionID.toLowerCase() : undefined;
    let conditionId = present(m.conditionId) ? m.conditionId.toLowerCase() : questionID ? deriveConditionId(questionID) : undefined;
    const slug = present(m.slug) ? m.slug : slugify(m.question);
    if (slug === '') {
      this.problem(`${path}.slug`, 'cannot be derived from the question: give a slug');
      return undefined;
    }
    const id = this.ids.resolve('market', idText(m.id), [conditionId, slug], [
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
    return { id, old, conditionId, questionID, slug };
  }

  /** The status flags: a resolved market stays closed; order intake only when the flags allow it. */
  private marketStatus(m: MarketInput, id: string, old: MarketRec | undefined, path: string) {
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
    return { active, closed, archived, enableOrderBook, acceptingOrders, acceptingOrdersTimestamp };
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
    for (const p of uniqueValueProblems(this.store, plan)) this.problem(p.path, p.message);
    return plan;
  }
}

/**
 * Validates and plans an upsert against the store's current state (or the enclosing transaction's).
 * `floors` (default: the inputs' own) keep assigned ids above every explicit id: a file imported in
 * batches passes the whole file's, so an id assigned in an early batch never takes one a later batch names.
 */
export function planUpsert(store: Store, inputs: readonly EventInput[], nowIso: string, floors?: IdFloors, memo = new TokenMemo()): Plan {
  const planner = new Planner(store, nowIso, memo, floors ?? explicitIdFloors(inputs));
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

