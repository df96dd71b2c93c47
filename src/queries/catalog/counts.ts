/** The per-(scope, status) event counts the catalog's writer keeps (projections/catalog/apply.ts). */
import type { Store } from '../../journal/env.ts';
import { catalogMetaKeys } from '../../journal/keys.ts';

/** Events of a scope with a status code; 0 when none. */
export function scopeCount(store: Store, scope: string, status: number): number {
  return (store.catalog.get(catalogMetaKeys.count(scope, status)) as number | undefined) ?? 0;
}
