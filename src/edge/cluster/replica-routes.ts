/**
 * Which routes a read replica (ROLE=replica) serves: every read, from its own store. The rest belongs to
 * the sequencer, the only writer, and a replica answers it with PM_ERR_READ_REPLICA naming the
 * sequencer's URL (pipeline.ts), never a silent proxy:
 *   - the admin API (the bearer-token routes);
 *   - L1 routes (API-key creation and derivation: the sequencer issues keys);
 *   - trading routes other than GET (orders, cancels, heartbeats, key management, wallet operations),
 *     except POST /orders-scoring, a read with a body;
 *   - /balance-allowance: available and reserved amounts are the sequencer engine's ledger, which a
 *     replica does not run (it holds the committed balances, not the reservations).
 */
import type { AnyRoute } from '../pipeline/route.ts';

const READS_WITH_A_BODY = new Set(['/orders-scoring']);

export function servedByReplica(route: AnyRoute): boolean {
  if (route.group === 'admin' || route.auth === 'admin' || route.auth === 'l1') return false;
  if (route.path.startsWith('/balance-allowance')) return false;
  if (route.group === 'trading' && route.method !== 'GET' && !READS_WITH_A_BODY.has(route.path)) return false;
  return true;
}
