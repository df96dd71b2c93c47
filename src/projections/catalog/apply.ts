/**
 * Applying a checked plan inside the upsert's transaction: records, their index entries (diffed), the
 * per-scope event counts, the search postings of every event whose words moved, the id sequences and the
 * catalog generation readers cache by.
 */
import type { Store } from '../../journal/env.ts';
import { catalogIx, catalogKey, catalogMetaKeys, type CatalogKind, type Key } from '../../journal/keys.ts';
import { EVENT_COLUMNS, eventTerms, sameValue, type EventRec, type MarketRec, type SearchDoc, type TagRec } from './catalog-index.ts';
import { diffKeys, eventCountKeys, eventKeys, marketKeys, postingKeys, seriesKeys, tagKeys } from './index-keys.ts';
import { getRec } from './lookups.ts';
import type { Plan } from './planner.ts';

/** Marks the catalog changed, so every reader (this process or another) drops what it cached. */
export function bumpGeneration(store: Store): void {
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

export function writeMarket(store: Store, old: MarketRec | undefined, next: MarketRec): void {
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

export function applyPlan(store: Store, plan: Plan): void {
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
