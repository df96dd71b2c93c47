/**
 * Rendered answers of the wallet data routes, and the cache that keeps them. Answers are written as JSON
 * text, row by row, and a page is the rows joined: polling clients ask for the same pages again and again,
 * and a 100-row page is ~80 KB of text joined and then garbage-collected per request. So a page asked for
 * again while nothing it shows has changed is the text written the last time (PageCache, bounded by the
 * total length of its texts); what "nothing changed" means is each page kind's own (positions.ts,
 * trades.ts). Cached texts are flat strings (see `flat`).
 */

/** Characters of rendered pages one cache keeps, over every wallet (the readers keep one for positions, one for trades). */
const PAGE_CACHE_CHARS = 16_000_000;

/**
 * `s` as one contiguous string. V8 keeps a concatenation as a rope of its pieces and copies a rope piece
 * by piece every time it is joined into an answer: a 100-row page of cached ropes took 170 us to join,
 * of flat rows 8 us. A row's text is written once and joined on every request, so it is flattened once.
 * (Reading a character also flattens, but an optimizing compiler may drop an unused read; a UTF-8 round
 * trip is exact here because JSON.stringify leaves no lone surrogates.)
 */
export function flat(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}

/**
 * `[items joined by commas]` as one flat string (the items are consumed). The brackets go inside the
 * first and last items rather than around the join, which would make a rope that the HTTP layer copies
 * once more to flatten (a 78 KB page: 15-20 us).
 */
export function jsonArray(items: string[]): string {
  if (items.length === 0) return '[]';
  items[0] = '[' + items[0];
  items[items.length - 1] += ']';
  return items.join(',');
}

/** Rendered pages by request, bounded by the total length of their texts (oldest dropped first). */
export class PageCache<E extends { json: string }> {
  private readonly entries = new Map<string, E>();
  private chars = 0;

  constructor(private readonly limitChars = PAGE_CACHE_CHARS) {}

  get(key: string): E | undefined {
    return this.entries.get(key);
  }

  set(key: string, e: E): void {
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.chars -= old.json.length;
      this.entries.delete(key);
    }
    if (e.json.length > this.limitChars / 4) return;
    this.entries.set(key, e);
    this.chars += e.json.length;
    // Insertion order is age; only walked when over the limit: reaching a Map's first entry walks the
    // slots of every entry deleted since its last rehash.
    if (this.chars > this.limitChars) {
      for (const [k, x] of this.entries) {
        if (this.chars <= this.limitChars) break;
        this.entries.delete(k);
        this.chars -= x.json.length;
      }
    }
  }
}
