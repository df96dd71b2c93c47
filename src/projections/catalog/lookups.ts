/**
 * Catalog reads the write side needs (inside or outside a transaction): a record by kind and id, and the id
 * a unique index (slug, condition id, token id) holds for a value.
 */
import type { Store } from '../../journal/env.ts';
import { catalogIx, catalogKey, type CatalogKind, type Key } from '../../journal/keys.ts';

export function getRec<R>(store: Store, kind: CatalogKind, id: string): R | undefined {
  return store.catalog.get(catalogKey(kind, id)) as R | undefined;
}

/** The id at the end of the first key of an index range (unique indexes: slug, condition, token). */
export function firstIndexedId(store: Store, range: { start: Key; end: Key }): string | undefined {
  for (const key of store.indexes.getKeys({ start: range.start, end: range.end, limit: 1 })) {
    return String((key as Key)[(key as Key).length - 1]);
  }
  return undefined;
}

export const eventIdBySlug = (store: Store, slug: string) => firstIndexedId(store, catalogIx.eventSlugRange(slug));
export const marketIdBySlug = (store: Store, slug: string) => firstIndexedId(store, catalogIx.marketSlugRange(slug));
export const marketIdByCondition = (store: Store, c: string) => firstIndexedId(store, catalogIx.marketConditionRange(c));
export const marketIdByToken = (store: Store, t: string) => firstIndexedId(store, catalogIx.marketTokenRange(t));
export const tagIdBySlug = (store: Store, slug: string) => firstIndexedId(store, catalogIx.tagSlugRange(slug));
export const seriesIdBySlug = (store: Store, slug: string) => firstIndexedId(store, catalogIx.seriesSlugRange(slug));
