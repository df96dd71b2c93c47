/**
 * Ordered walks over the catalog's sort indexes (projections/catalog/catalog-index.ts): ranges merged in value
 * then id order, pages read from partitions with ties ordered by the full comparator, and the partitions
 * that leading boolean order fields make of the status codes.
 */
import type { Store } from '../../journal/env.ts';
import type { Key } from '../../journal/keys.ts';
import { STATUS_BITS, compareFull, compareIndexValues, type OrderTerm, type StatusFlag } from '../../projections/catalog/catalog-index.ts';

/** An index row: sort value, id, and the range's status code (events; 0 for tags). */
export type Entry = [value: string | number, id: number, status: number];

function entryOf(key: Key, status: number): Entry {
  return [key[key.length - 2], key[key.length - 1] as number, status];
}

export interface SortRange {
  start: Key;
  end: Key;
  status: number;
}

/**
 * Merges ordered index ranges (each sorted by value then id) into one stream in the given direction.
 * Closes every cursor when the consumer stops early (for-of calls return()).
 */
export function* mergeRanges(store: Store, ranges: SortRange[], descending: boolean): Generator<Entry> {
  const its = ranges.map((r) =>
    store.indexes.getKeys(descending ? { start: r.end, end: r.start, reverse: true } : { start: r.start, end: r.end })[Symbol.iterator](),
  );
  try {
    const heads: (Entry | undefined)[] = its.map((it, i) => {
      const n = it.next();
      return n.done ? undefined : entryOf(n.value as Key, ranges[i].status);
    });
    const sign = descending ? -1 : 1;
    for (;;) {
      let best = -1;
      for (let i = 0; i < heads.length; i++) {
        const h = heads[i];
        if (!h) continue;
        if (best < 0) {
          best = i;
          continue;
        }
        const b = heads[best]!;
        const c = compareIndexValues(h[0], b[0]) || h[1] - b[1];
        if (c * sign < 0) best = i;
      }
      if (best < 0) return;
      yield heads[best]!;
      const n = its[best].next();
      heads[best] = n.done ? undefined : entryOf(n.value as Key, ranges[best].status);
    }
  } finally {
    for (const it of its) it.return?.();
  }
}

/**
 * Reads rows [offset, offset + limit) of an ordered stream made of partitions (already in order).
 * `accept` drops rows the index could not filter; `sortGroup`, when given, orders each run of rows
 * whose index value ties (text prefixes, or later order columns) with the full comparator. A tie run
 * that lies wholly before the offset is skipped without loading a record.
 */
export function readPage(
  partitions: Iterable<Iterable<Entry>>,
  offset: number,
  limit: number,
  accept: ((id: number, status: number) => boolean) | undefined,
  sortGroup: ((ids: number[]) => number[]) | undefined,
): number[] {
  const out: number[] = [];
  const end = offset + limit;
  let pos = 0;
  for (const part of partitions) {
    let group: number[] = [];
    let groupValue: string | number | undefined;
    const flush = () => {
      if (group.length === 0) return;
      if (pos + group.length > offset) {
        const sorted = sortGroup!(group);
        for (let i = 0; i < sorted.length; i++) if (pos + i >= offset && pos + i < end) out.push(sorted[i]);
      }
      pos += group.length;
      group = [];
    };
    for (const [value, id, status] of part) {
      if (accept && !accept(id, status)) continue;
      if (sortGroup) {
        if (group.length > 0 && value !== groupValue) {
          flush();
          if (pos >= end) return out;
        }
        groupValue = value;
        group.push(id);
      } else {
        if (pos >= offset) out.push(id);
        pos++;
        if (pos >= end) return out;
      }
    }
    flush();
    if (pos >= end) return out;
  }
  return out;
}

/** Full-record comparator of an order list (ties end on id), in one direction. */
export function comparator<R extends { id: string }>(terms: OrderTerm<R>[], descending: boolean, load: (id: number) => R): (a: number, b: number) => number {
  const sign = descending ? -1 : 1;
  return (a, b) => {
    const ra = load(a);
    const rb = load(b);
    for (const t of terms) {
      let c = 0;
      if (t.flag) c = Number((ra as unknown as Record<string, boolean>)[t.flag]) - Number((rb as unknown as Record<string, boolean>)[t.flag]);
      else if (t.column) c = compareFull(t.column.kind, t.column.get(ra), t.column.get(rb));
      if (c !== 0) return c * sign;
    }
    return (a - b) * sign;
  };
}

/** Splits status codes into ordered partitions by the leading boolean order fields. */
export function partitionByFlags(codes: number[], flags: StatusFlag[], descending: boolean): number[][] {
  if (flags.length === 0) return codes.length > 0 ? [codes] : [];
  const tuple = (code: number) => flags.map((f) => ((code & STATUS_BITS[f]) !== 0 ? 1 : 0));
  const sign = descending ? -1 : 1;
  const sorted = [...codes].sort((a, b) => {
    const ta = tuple(a);
    const tb = tuple(b);
    for (let i = 0; i < ta.length; i++) if (ta[i] !== tb[i]) return (ta[i] - tb[i]) * sign;
    return 0;
  });
  const out: number[][] = [];
  let lastKey = '';
  for (const code of sorted) {
    const key = tuple(code).join('');
    if (out.length === 0 || key !== lastKey) out.push([code]);
    else out[out.length - 1].push(code);
    lastKey = key;
  }
  return out;
}
