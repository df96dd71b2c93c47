/**
 * Which routes a read replica serves (src/edge/cluster/replica-routes.ts): reads of every group, signed reads
 * included; never the admin API, L1 routes, trading writes or the ledger's /balance-allowance.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { servedByReplica } from '../../../src/edge/cluster/replica-routes.ts';
import type { AnyRoute, AuthKind, HttpMethod, RouteGroup } from '../../../src/edge/pipeline/route.ts';

const r = (method: HttpMethod, path: string, group: RouteGroup, auth: AuthKind = 'none') => ({ method, path, group, auth, summary: '', handler: () => null }) as AnyRoute;

test('reads are served, writes and the ledger are the sequencer\'s', () => {
  const served = [
    r('GET', '/markets', 'clob'),
    r('POST', '/books', 'clob'),
    r('POST', '/batch-prices-history', 'clob'),
    r('GET', '/events/slug/:slug', 'catalog'),
    r('GET', '/positions', 'data'),
    r('GET', '/data/order/:id', 'clob', 'l2'),
    r('GET', '/data/orders', 'trading', 'l2'),
    r('GET', '/notifications', 'trading', 'l2'),
    r('GET', '/auth/api-keys', 'trading', 'l2'),
    r('POST', '/orders-scoring', 'trading', 'l2'),
    r('GET', '/', 'ops'),
    r('GET', '/metrics', 'ops'),
  ];
  const refused = [
    r('POST', '/order', 'trading', 'l2'),
    r('DELETE', '/cancel-all', 'trading', 'l2'),
    r('DELETE', '/notifications', 'trading', 'l2'),
    r('POST', '/v1/heartbeats', 'trading', 'l2'),
    r('POST', '/auth/api-key', 'trading', 'l1'),
    r('GET', '/auth/derive-api-key', 'trading', 'l1'),
    r('GET', '/balance-allowance', 'trading', 'l2'),
    r('GET', '/balance-allowance/update', 'trading', 'l2'),
    r('GET', '/admin/balances/:address', 'admin', 'admin'),
    r('POST', '/admin/events', 'admin', 'admin'),
  ];
  assert.deepEqual(served.filter((x) => !servedByReplica(x)).map((x) => `${x.method} ${x.path}`), []);
  assert.deepEqual(refused.filter((x) => servedByReplica(x)).map((x) => `${x.method} ${x.path}`), []);
});
