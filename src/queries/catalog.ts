/**
 * The catalog's read side: synchronous LMDB reads through the indexes of projections/catalog/catalog-index.ts.
 * No request scans the catalog: every list walks the range of its most selective index and stops as
 * soon as its page is full.
 *
 *   GET /events          the (scope, status, column) ranges of the smallest matching scope, merged
 *                        across status codes (k <= 8), partitioned by leading boolean order fields;
 *                        filters the chosen scope does not imply are checked on the record.
 *   GET /public-search   the postings of each query word (prefix range); the rarest word drives and
 *                        the others are intersected by walking their postings or, when those are much
 *                        larger, by checking each candidate's stored search document.
 *   GET /markets         the id-ordered market list of a scope, read at the cursor's offset.
 *
 * Shapes returned here are the wire forms of edge/schemas/catalog.ts, typed by its schemas
 * (test/queries/catalog.test.ts checks every one against its schema); field decisions are in
 * docs/decisions/catalog.md ("Catalog").
 *
 * The parts, in queries/catalog/: params.ts (query parameters), walks.ts (ordered index walks),
 * event-list.ts (GET /events), search.ts (GET /public-search), forms.ts (wire forms), reader.ts
 * (CatalogReader and its caches), profile.ts. This module is their public face.
 */
export { CatalogReader } from './catalog/reader.ts';
export type { PriceSource } from './catalog/forms.ts';
export { MARKETS_PAGE_SIZE, normalizeCreatorParam, type EventListParams, type Page, type SearchParams, type TagListParams } from './catalog/params.ts';
export { getProfile } from './catalog/profile.ts';
