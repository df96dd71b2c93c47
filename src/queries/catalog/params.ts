/** The catalog's query parameters as the routes parse them, and the page shape of the market lists. */
import type { EventRec, OrderTerm, StatusFlag, TagRec } from '../../projections/catalog/catalog-index.ts';

export interface EventListParams {
  limit: number;
  offset: number;
  status: Partial<Record<StatusFlag, boolean>>;
  /** Tag slugs (from `tag` and `tag_slug`) and numeric tag ids; an event must carry all of them. */
  tagSlugs: string[];
  tagIds: string[];
  seriesSlug?: string;
  slug?: string;
  /** Parsed `order`; empty = by id. */
  order: OrderTerm<EventRec>[];
  ascending?: boolean;
  creator?: string;
}

export interface TagListParams {
  limit: number;
  offset: number;
  order: OrderTerm<TagRec>[];
  ascending?: boolean;
}

export interface SearchParams {
  q: string;
  limitPerType: number;
  page: number;
  searchTags: boolean;
  creator?: string;
}

export interface Page<T> {
  data: T[];
  /** True when rows follow this page. */
  more: boolean;
}

/** Rows per page of GET /markets and GET /sampling-markets. */
export const MARKETS_PAGE_SIZE = 500;

/** Creator parameters compare like stored creators: addresses lowercase, anything else as given. */
export function normalizeCreatorParam(c: string | undefined): string | undefined {
  if (c === undefined || c === '') return undefined;
  return /^0x[0-9a-fA-F]{40}$/.test(c) ? c.toLowerCase() : c;
}
