/**
 * Where a shard gets its book from: the one switch between the production book and the reference book.
 *
 * A worker cannot receive a function, so the choice travels as a module URL plus an export name and the
 * worker imports it. `production` (book.ts, typed arrays) is the default; `reference` (reference-book.ts)
 * is the slow oracle, used by the differential benchmark and available to tests.
 */
import type { MarketParams, MatchingBook } from '../book/api.ts';

export type BookKind = 'production' | 'reference';

export interface BookFactoryRef {
  module: string;
  export: string;
}

export const BOOK_FACTORIES: Record<BookKind, BookFactoryRef> = {
  production: { module: new URL('../book/book.ts', import.meta.url).href, export: 'createBook' },
  reference: { module: new URL('../book/reference-book.ts', import.meta.url).href, export: 'createReferenceBook' },
};

export type BookFactory = (params: MarketParams) => MatchingBook;

export async function loadBookFactory(ref: BookFactoryRef): Promise<BookFactory> {
  const mod = (await import(ref.module)) as Record<string, unknown>;
  const f = mod[ref.export];
  if (typeof f !== 'function') throw new Error(`${ref.module} does not export a function ${ref.export}`);
  return f as BookFactory;
}
