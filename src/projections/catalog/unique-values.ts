/**
 * The unique values of the catalog, checked over a whole planned request (planner.ts finish): slugs per
 * kind, condition ids and token ids. A value may be claimed once in the request, and not taken from a stored
 * record unless that record keeps it (the index agrees with it) or gives it up in the same request. Owns that
 * rule; the indexes it reads are lookups.ts's. Separate because it is the one check that needs every record of
 * the request at once, and the same for every field.
 *
 * Reads the store, writes nothing. Imports journal/env.ts (the store's type), input.ts, lookups.ts and the
 * record types (catalog-index.ts); never planner.ts, which calls it.
 */
import type { Store } from '../../journal/env.ts';
import type { Problem } from './input.ts';
import { eventIdBySlug, marketIdByCondition, marketIdBySlug, marketIdByToken, seriesIdBySlug, tagIdBySlug } from './lookups.ts';
import type { EventRec, MarketRec, SeriesRec, TagRec } from './catalog-index.ts';

/** A record as planned: the stored one it replaces, and where the request gave it (planner.ts Planned has it). */
interface Planned<R> {
  old: R | undefined;
  next: R;
  path: string;
}

/** The records of a planned request (planner.ts Plan has them). */
export interface PlannedRecords {
  tags: ReadonlyMap<string, Planned<TagRec>>;
  series: ReadonlyMap<string, Planned<SeriesRec>>;
  events: ReadonlyMap<string, Planned<EventRec>>;
  markets: ReadonlyMap<string, Planned<MarketRec>>;
}

/** Every value of a plan claimed twice in it, or already a stored record's that keeps it. */
export function uniqueValueProblems(store: Store, plan: PlannedRecords): Problem[] {
  const problems: Problem[] = [];
  const problem = (path: string, message: string) => problems.push({ path, message });
  const unique = <R extends { id: string }>(
    kind: string,
    planned: ReadonlyMap<string, Planned<R>>,
    field: string,
    values: (r: R) => string[],
    owner: (v: string) => string | undefined,
  ) => {
    const claimed = new Map<string, Planned<R>>();
    for (const p of planned.values()) {
      for (const v of values(p.next)) {
        const other = claimed.get(v);
        if (other && other.next.id !== p.next.id) problem(`${p.path}.${field}`, `${v} is also used by ${kind} ${other.next.id} at ${other.path}`);
        else claimed.set(v, p);
      }
    }
    for (const p of planned.values()) {
      // A stored record keeping its value owns it already (the index agrees with the record).
      const kept = p.old ? new Set(values(p.old)) : undefined;
      for (const v of values(p.next)) {
        if (kept?.has(v)) continue;
        const o = owner(v);
        if (o === undefined || o === p.next.id) continue;
        // The stored owner gives the value up in this very request.
        const moving = planned.get(o);
        if (moving && !values(moving.next).includes(v)) continue;
        problem(`${p.path}.${field}`, `${v} is already used by ${kind} ${o}`);
      }
    }
  };
  unique('event', plan.events, 'slug', (e) => [e.slug], (v) => eventIdBySlug(store, v));
  unique('tag', plan.tags, 'slug', (t) => [t.slug], (v) => tagIdBySlug(store, v));
  unique('series', plan.series, 'slug', (s) => [s.slug], (v) => seriesIdBySlug(store, v));
  unique('market', plan.markets, 'slug', (m) => [m.slug], (v) => marketIdBySlug(store, v));
  unique('market', plan.markets, 'conditionId', (m) => [m.conditionId], (v) => marketIdByCondition(store, v));
  unique('market', plan.markets, 'clobTokenIds', (m) => [...m.clobTokenIds], (v) => marketIdByToken(store, v));
  return problems;
}
