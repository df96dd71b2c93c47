/**
 * GET /public-search over the term postings of projections/catalog/catalog-index.ts: events matching every query
 * word, ranked (the rarest word drives; the others are intersected by walking their postings or, when
 * those are much larger, by reading each candidate's search document), and tags whose label matches.
 */
import type { Store } from '../../journal/env.ts';
import { catalogIx, catalogKey, catalogMetaKeys, type Key } from '../../journal/keys.ts';
import { scopeAll, scopeCreator, scopeTag, type SearchDoc, type TagRec } from '../../projections/catalog/catalog-index.ts';
import { scopeCount } from './counts.ts';

/**
 * Events matching every word. Each candidate carries one integer: 2 x (sum over words of 2 x best
 * weight, +1 for a whole-word match) + open, so ordering is by score, then open, then newest id.
 * Returns the best `need` in order (a top-k heap, not a full sort) and the number of matches.
 */
export function searchEvents(store: Store, words: string[], creator: string | undefined, need: number): { ids: number[]; total: number } {
  const scope = creator !== undefined ? scopeCreator(creator) : scopeAll;
  const plans = words
    .map((word) => {
      const range = catalogIx.eventTermPrefixRange(scope, word);
      // lmdb-js annotates the options object it is given: each call gets its own copy.
      return { word, range, size: store.indexes.getKeysCount({ start: range.start, end: range.end }) };
    })
    .sort((a, b) => a.size - b.size);
  if (plans[0].size === 0) return { ids: [], total: 0 };

  const walk = (word: string, range: { start: Key; end: Key }) => {
    const best = new Map<number, number>();
    for (const key of store.indexes.getKeys({ start: range.start, end: range.end })) {
      const k = key as Key;
      const id = k[3] as number;
      const rank = ((k[4] as number) * 2 + (k[2] === word ? 1 : 0)) * 2 + (k[5] as number);
      const seen = best.get(id);
      if (seen === undefined || seen < rank) best.set(id, rank);
    }
    return best;
  };

  const candidates = walk(plans[0].word, plans[0].range);
  for (const plan of plans.slice(1)) {
    if (candidates.size === 0) break;
    // Walking a posting costs ~0.5 us, decoding a search document ~15 us: walk unless the word is
    // far more common than the candidate set.
    if (plan.size <= candidates.size * 25) {
      const other = walk(plan.word, plan.range);
      for (const [id, c] of candidates) {
        const o = other.get(id);
        if (o === undefined) candidates.delete(id);
        else candidates.set(id, c + o - (o & 1));
      }
    } else {
      for (const [id, c] of candidates) {
        const doc = store.catalog.get(catalogMetaKeys.searchDoc(String(id))) as SearchDoc | undefined;
        let s2 = 0;
        for (const [term, weight] of doc?.terms ?? []) {
          if (term.startsWith(plan.word)) s2 = Math.max(s2, weight * 2 + (term === plan.word ? 1 : 0));
        }
        if (s2 > 0) candidates.set(id, c + s2 * 2);
        else candidates.delete(id);
      }
    }
  }
  return { ids: topRanked(candidates, need), total: candidates.size };
}

/** Tags whose label matches every word: exact label first, then more exact words, then more events. */
export function searchTags(store: Store, words: string[], q: string, creator: string | undefined): { id: string; label: string; slug: string; event_count: number }[] {
  let hits: Map<number, number> | undefined;
  for (const word of words) {
    const found = new Map<number, number>();
    for (const key of store.indexes.getKeys(catalogIx.tagTermPrefixRange(word))) {
      const k = key as Key;
      const id = k[2] as number;
      found.set(id, Math.max(found.get(id) ?? 0, k[1] === word ? 1 : 0));
    }
    if (hits === undefined) hits = found;
    else for (const [id, exact] of hits) {
      const f = found.get(id);
      if (f === undefined) hits.delete(id);
      else hits.set(id, exact + f);
    }
    if (hits.size === 0) return [];
  }
  const wanted = q.trim().toLowerCase();
  const rows: { id: string; label: string; slug: string; event_count: number; exact: number; label1: number }[] = [];
  for (const [id, exact] of hits ?? []) {
    const t = store.catalog.get(catalogKey('tag', String(id))) as TagRec | undefined;
    if (!t) continue;
    const scope = scopeTag(t.id, creator);
    let n = 0;
    for (let code = 0; code < 8; code++) n += scopeCount(store, scope, code);
    if (creator !== undefined && n === 0) continue;
    rows.push({ id: t.id, label: t.label, slug: t.slug, event_count: n, exact, label1: t.label.toLowerCase() === wanted ? 1 : 0 });
  }
  rows.sort((a, b) => b.label1 - a.label1 || b.exact - a.exact || b.event_count - a.event_count || Number(a.id) - Number(b.id));
  return rows.map(({ id, label, slug, event_count }) => ({ id, label, slug, event_count }));
}

/** True when (rank a, id a) orders before (rank b, id b): higher rank, then higher id. */
const before = (ra: number, ia: number, rb: number, ib: number) => ra > rb || (ra === rb && ia > ib);

/** The best `k` candidates (id -> rank), best first: a size-k min-heap over the candidates, then a sort of k. */
function topRanked(candidates: Map<number, number>, k: number): number[] {
  const n = Math.min(k, candidates.size);
  if (n === 0) return [];
  const ids: number[] = [];
  const ranks: number[] = [];
  const swap = (i: number, j: number) => {
    [ids[i], ids[j]] = [ids[j], ids[i]];
    [ranks[i], ranks[j]] = [ranks[j], ranks[i]];
  };
  // Heap root = the worst kept candidate.
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let w = i;
      if (l < ids.length && before(ranks[w], ids[w], ranks[l], ids[l])) w = l;
      if (r < ids.length && before(ranks[w], ids[w], ranks[r], ids[r])) w = r;
      if (w === i) return;
      swap(i, w);
      i = w;
    }
  };
  for (const [id, rank] of candidates) {
    if (ids.length < n) {
      ids.push(id);
      ranks.push(rank);
      for (let i = ids.length - 1; i > 0; ) {
        const parent = (i - 1) >> 1;
        if (!before(ranks[parent], ids[parent], ranks[i], ids[i])) break;
        swap(i, parent);
        i = parent;
      }
    } else if (before(rank, id, ranks[0], ids[0])) {
      ids[0] = id;
      ranks[0] = rank;
      down(0);
    }
  }
  const order = ids.map((_, i) => i).sort((a, b) => (before(ranks[a], ids[a], ranks[b], ids[b]) ? -1 : 1));
  return order.map((i) => ids[i]);
}
