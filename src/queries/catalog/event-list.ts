/**
 * GET /events: which events a query matches, in its order, one page. The most selective scope (a tag, the
 * series, the creator or everything) drives: its (scope, status, column) ranges are merged across status
 * codes (k <= 8) and partitioned by leading boolean order fields; filters that scope does not imply are
 * checked by probing their own scope's id range, never by decoding a record.
 */
import type { Store } from '../../journal/env.ts';
import { catalogIx, type Key } from '../../journal/keys.ts';
import {
  EVENT_COLUMNS,
  scopeAll,
  scopeCreator,
  scopeSeries,
  scopeTag,
  statusCode,
  statusCodesFor,
  type Column,
  type EventRec,
  type OrderTerm,
  type StatusFlag,
} from '../../projections/catalog/catalog-index.ts';
import { firstIndexedId } from '../../projections/catalog.ts';
import { scopeCount } from './counts.ts';
import type { EventListParams } from './params.ts';
import { comparator, mergeRanges, partitionByFlags, readPage, type SortRange } from './walks.ts';

/** The filters of a query resolved to ids; undefined when a named tag or series does not exist. */
interface Filters {
  tagIds: Set<string>;
  seriesId: string | undefined;
  creator: string | undefined;
  codes: number[];
}

/** The scope that drives a walk, and the scopes of the filters it does not imply. */
interface Driver {
  scope: string;
  residual: string[];
}

/** Ids of one page of GET /events; `load` reads (and may cache) an event record by id. */
export function eventListIds(store: Store, p: EventListParams, load: (id: number) => EventRec): number[] {
  const f = resolveFilters(store, p);
  if (f === undefined) return [];
  if (p.slug !== undefined) {
    const id = firstIndexedId(store, catalogIx.eventSlugRange(p.slug));
    const e = id === undefined ? undefined : load(Number(id));
    return e && matches(e, f) && p.offset === 0 ? [Number(e.id)] : [];
  }
  const driver = drivingScope(store, f);
  return driver === undefined ? [] : orderedPage(store, p, f, driver, load);
}

function resolveFilters(store: Store, p: EventListParams): Filters | undefined {
  const tagIds = new Set(p.tagIds);
  for (const slug of p.tagSlugs) {
    const id = firstIndexedId(store, catalogIx.tagSlugRange(slug));
    if (id === undefined) return undefined;
    tagIds.add(id);
  }
  let seriesId: string | undefined;
  if (p.seriesSlug !== undefined) {
    seriesId = firstIndexedId(store, catalogIx.seriesSlugRange(p.seriesSlug));
    if (seriesId === undefined) return undefined;
  }
  return { tagIds, seriesId, creator: p.creator, codes: statusCodesFor(p.status) };
}

function matches(e: EventRec, f: Filters): boolean {
  return (
    (f.creator === undefined || e.creator === f.creator) &&
    f.codes.includes(statusCode(e)) &&
    [...f.tagIds].every((t) => e.tagIds.includes(t)) &&
    (f.seriesId === undefined || e.seriesIds.includes(f.seriesId))
  );
}

/** The scope with the fewest events of the wanted statuses; undefined when it has none. */
function drivingScope(store: Store, f: Filters): Driver | undefined {
  const { creator, seriesId } = f;
  const candidates: { scope: string; tag?: string; series?: boolean }[] = [];
  for (const t of f.tagIds) candidates.push({ scope: scopeTag(t, creator), tag: t });
  if (seriesId !== undefined) candidates.push({ scope: scopeSeries(seriesId, creator), series: true });
  if (candidates.length === 0) candidates.push({ scope: creator !== undefined ? scopeCreator(creator) : scopeAll });
  let best = candidates[0];
  let bestCount = Infinity;
  for (const c of candidates) {
    const n = f.codes.reduce((sum, code) => sum + scopeCount(store, c.scope, code), 0);
    if (n < bestCount) {
      best = c;
      bestCount = n;
    }
  }
  if (bestCount === 0) return undefined;
  const residual: string[] = [];
  for (const t of f.tagIds) if (t !== best.tag) residual.push(scopeTag(t, creator));
  if (seriesId !== undefined && !best.series) residual.push(scopeSeries(seriesId, creator));
  return { scope: best.scope, residual };
}

/** The page in the query's order: one index range read at its offset when it can be, else a merged walk. */
function orderedPage(store: Store, p: EventListParams, f: Filters, driver: Driver, load: (id: number) => EventRec): number[] {
  // Membership in each residual scope's id range with the same status: an index probe, no record decoding.
  const idCode = EVENT_COLUMNS.id.code;
  const accept =
    driver.residual.length > 0
      ? (id: number, status: number) => driver.residual.every((scope) => store.indexes.doesExist(catalogIx.eventSort(scope, status, idCode, id, id)))
      : undefined;

  const explicit = p.order.length > 0;
  const descending = !(p.ascending ?? !explicit);
  const terms: OrderTerm<EventRec>[] = explicit ? p.order : [{ field: 'id', column: EVENT_COLUMNS.id }];
  const lead: StatusFlag[] = [];
  let i = 0;
  while (i < terms.length && terms[i].flag) lead.push(terms[i++].flag!);
  const primary: Column<EventRec> = terms[i]?.column ?? EVENT_COLUMNS.id;
  const rest = terms.slice(i + 1);

  const live = f.codes.filter((code) => scopeCount(store, driver.scope, code) > 0);
  const partitions = partitionByFlags(live, lead, descending).map((part) =>
    part.map((code): SortRange => ({ ...catalogIx.eventSortRange(driver.scope, code, primary.code), status: code })),
  );
  const tieGroups = primary.kind === 'text' || rest.length > 0;
  const sortGroup = tieGroups ? (ids: number[]) => ids.sort(comparator([{ field: 'p', column: primary }, ...rest], descending, load)) : undefined;

  if (partitions.length === 1 && partitions[0].length === 1 && !accept && !sortGroup) {
    const r = partitions[0][0];
    const keys = store.indexes.getKeys(
      descending ? { start: r.end, end: r.start, reverse: true, offset: p.offset, limit: p.limit } : { ...r, offset: p.offset, limit: p.limit },
    );
    return Array.from(keys, (k) => (k as Key)[(k as Key).length - 1] as number);
  }
  return readPage(
    partitions.map((ranges) => ({ [Symbol.iterator]: () => mergeRanges(store, ranges, descending) })),
    p.offset,
    p.limit,
    accept,
    sortGroup,
  );
}
