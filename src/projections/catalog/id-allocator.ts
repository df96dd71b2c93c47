/**
 * Which id a catalog input gets when it is planned (planner.ts): the one it gives; else the one an id-less
 * input of the same request claimed under the same lookup (a slug, a condition id); else the stored record's
 * under that lookup; else a fresh one, the kind's next id above every explicit id of the request (or of the
 * whole file imported in batches: the floors) and above the stored sequence, skipping ids that exist.
 * Owns the claims and counters of one request; reads the store, writes nothing (the writer stores the next
 * ids). Separate because the rule is the same for every kind and independent of what a record holds.
 *
 * Imports journal/ (keys, the store's type), the schemas' input types, input.ts and lookups.ts.
 */
import type { Store } from '../../journal/env.ts';
import { catalogMetaKeys, type CatalogKind } from '../../journal/keys.ts';
import type { EventInput } from '../../edge/schemas/admin.ts';
import { present } from './input.ts';
import { getRec } from './lookups.ts';

/** Lowest id each kind may assign (1 + the highest explicit id of the request or file). */
export type IdFloors = Partial<Record<CatalogKind, number>>;

/** The id floors of a request, or of a whole file imported in batches. */
export function explicitIdFloors(inputs: readonly EventInput[]): IdFloors {
  const floors: IdFloors = {};
  const bump = (kind: CatalogKind, id: string | number | null | undefined) => {
    if (present(id)) floors[kind] = Math.max(floors[kind] ?? 1, Number(id) + 1);
  };
  for (const ev of inputs) {
    bump('event', ev.id);
    for (const m of ev.markets ?? []) bump('market', m.id);
    for (const t of ev.tags ?? []) bump('tag', t.id);
    for (const s of ev.series ?? []) bump('series', s.id);
  }
  return floors;
}

type Counter = { floor: number; next: number | undefined };

export class IdAllocator {
  /** `${kind}:${i}:${value}` claimed by an id-less input earlier in the request, under its i-th lookup. */
  private readonly claims = new Map<string, string>();
  private readonly counters = new Map<CatalogKind, Counter>();

  constructor(
    private readonly store: Store,
    floors: IdFloors,
  ) {
    // Explicit ids of the request raise the floor of new ids, so an assigned id never collides with one.
    for (const [kind, floor] of Object.entries(floors) as [CatalogKind, number][]) {
      const c = this.counter(kind);
      c.floor = Math.max(c.floor, floor);
    }
  }

  private counter(kind: CatalogKind): Counter {
    let c = this.counters.get(kind);
    if (!c) {
      c = { floor: 1, next: undefined };
      this.counters.set(kind, c);
    }
    return c;
  }

  private allocate(kind: CatalogKind): string {
    const c = this.counter(kind);
    if (c.next === undefined) {
      const stored = this.store.catalog.get(catalogMetaKeys.nextId(kind));
      c.next = Math.max(typeof stored === 'number' ? stored : 1, c.floor);
    }
    // An explicit id stored earlier may sit above the sequence: skip ids that exist.
    while (getRec(this.store, kind, String(c.next)) !== undefined) c.next++;
    return String(c.next++);
  }

  /** The id of an input of `kind`: `id` when given, else by its lookups (claimed, then stored), else a fresh one. */
  resolve(kind: CatalogKind, id: string | undefined, lookups: (string | undefined)[], byStore: ((v: string) => string | undefined)[]): string {
    if (id !== undefined) return id;
    for (let i = 0; i < lookups.length; i++) {
      const v = lookups[i];
      if (v === undefined) continue;
      const claimed = this.claims.get(`${kind}:${i}:${v}`);
      if (claimed) return claimed;
      const stored = byStore[i](v);
      if (stored) return stored;
    }
    const fresh = this.allocate(kind);
    for (let i = 0; i < lookups.length; i++) if (lookups[i] !== undefined) this.claims.set(`${kind}:${i}:${lookups[i]}`, fresh);
    return fresh;
  }
}
