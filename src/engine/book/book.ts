/**
 * The production order book: the book state (book-state.ts) with the matcher (match.ts) as its `place`.
 *
 * The two halves do not import each other: the matcher declares the state it works on (MatchTarget) and
 * this module, the only one that knows both, is where the compiler checks that BookState provides it.
 * `createBook` is the export the shards load (book-factory.ts) and what tests and benchmarks build.
 */

import type { EventSink, MarketParams, MatchingBook, PlaceCommand, PlaceResult } from './api.ts';
import { BookState } from './book-state.ts';
import { placeOrder, type MatchTarget } from './match.ts';

export class BookCore extends BookState implements MatchingBook, MatchTarget {
  place(cmd: PlaceCommand, sink: EventSink): PlaceResult {
    return placeOrder(this, cmd, sink);
  }
}

export function createBook(params: MarketParams): MatchingBook {
  return new BookCore(params);
}
