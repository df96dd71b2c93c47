/**
 * The index entries each kind of record implies (catalog-index.ts owns their meaning), and the diff that
 * writes only the entries an update moved.
 */
import type { Store } from '../../journal/env.ts';
import { catalogIx, catalogMetaKeys, type Key } from '../../journal/keys.ts';
import {
  EVENT_COLUMNS,
  TAG_COLUMNS,
  eventScopes,
  indexValue,
  isSampling,
  marketScopes,
  searchScopes,
  statusCode,
  words,
  type EventRec,
  type MarketRec,
  type SearchDoc,
  type SeriesRec,
  type TagRec,
} from './catalog-index.ts';

const EMPTY = Buffer.alloc(0);

export function eventKeys(e: EventRec): Key[] {
  const id = Number(e.id);
  const status = statusCode(e);
  const keys: Key[] = [catalogIx.eventSlug(e.slug, id)];
  const columns = Object.values(EVENT_COLUMNS).map((c) => [c.code, indexValue(c.kind, c.get(e))] as const);
  for (const scope of eventScopes(e)) {
    for (const [code, value] of columns) keys.push(catalogIx.eventSort(scope, status, code, value, id));
  }
  return keys;
}

export function eventCountKeys(e: EventRec): Key[] {
  const status = statusCode(e);
  return eventScopes(e).map((s) => catalogMetaKeys.count(s, status));
}

export function marketKeys(m: MarketRec): Key[] {
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

export function tagKeys(t: TagRec): Key[] {
  const id = Number(t.id);
  const keys: Key[] = [catalogIx.tagSlug(t.slug, id)];
  for (const c of Object.values(TAG_COLUMNS)) keys.push(catalogIx.tagSort(c.code, indexValue(c.kind, c.get(t)), id));
  for (const term of new Set(words(t.label))) keys.push(catalogIx.tagTerm(term, id));
  return keys;
}

export function seriesKeys(s: SeriesRec): Key[] {
  return [catalogIx.seriesSlug(s.slug, Number(s.id))];
}

export function postingKeys(eventId: string, doc: SearchDoc): Key[] {
  const id = Number(eventId);
  const keys: Key[] = [];
  for (const scope of searchScopes(doc.creator)) {
    for (const [term, weight] of doc.terms) keys.push(catalogIx.eventTerm(scope, term, id, weight, doc.open));
  }
  return keys;
}

/** Removes the keys only `before` has and adds the keys only `after` has. */
export function diffKeys(store: Store, before: Key[], after: Key[]): void {
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
