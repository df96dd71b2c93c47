/**
 * The orders table: the latest state of every order ever accepted, keyed by its journal seq (the seq of
 * its `order` event), with `orderIds` mapping the public order id to that seq.
 *
 * Why by seq: order ids are digests, uniformly random, so a table keyed by them takes every insert and
 * every update on a random leaf of a deep tree (records of ~1.5 KB, two per 4 KB page). Keyed by seq,
 * a new order is appended and an update lands where orders of the same moment live; only the small id
 * index takes random inserts, once per order.
 */
import type { OrderRecord } from '../domain/events.ts';
import type { Store } from './env.ts';

/** The order's latest state, or undefined for an id never accepted. */
export function readOrder(store: Store, orderId: string): OrderRecord | undefined {
  const seq = store.orderIds.get(orderId);
  return seq === undefined ? undefined : (store.orders.get(seq) as OrderRecord | undefined);
}

/** Every accepted order's id (start-up: the engine's duplicate filter). */
export function orderIdsOf(store: Store): Iterable<string> {
  return store.orderIds.getKeys({}) as Iterable<string>;
}

/** Issues the put of an order's latest state (same event-loop turn = same transaction). `rec.seq` must be set. */
export function putOrderState(store: Store, rec: OrderRecord): Promise<boolean> {
  return store.orders.put(rec.seq, rec);
}

/** Issues the put that maps a newly accepted order's id to its seq. */
export function putOrderId(store: Store, rec: OrderRecord): Promise<boolean> {
  return store.orderIds.put(rec.orderId, rec.seq);
}
