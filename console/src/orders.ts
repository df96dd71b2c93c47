/**
 * An open order as the console shows it, read from either shape the service answers GET /data/orders in:
 * the spec's OrderView (camelCase, `createdAt` ISO 8601; the spec profile) or the platform client's
 * OpenOrder (snake_case, `created_at` unix seconds; the clob-v2 and platform profiles, config
 * compat.shapes). The one place the console knows both: the table never reads a wire field itself.
 */
import type { Static } from '@sinclair/typebox';
import type { ClientOpenOrder, OrderView } from '../../src/edge/schemas/trading.ts';

export interface OpenOrderRow {
  id: string;
  /** The wallet the order trades for: the signer's own, or its proxy wallet or Safe. */
  maker: string;
  /** The API key that placed it ("admin" for an order the admin API placed). */
  owner: string;
  side: string;
  outcome: string;
  assetId: string;
  price: string;
  originalSize: string;
  sizeMatched: string;
  /** GTC, GTD, FOK or FAK. */
  type: string;
  /** Unix ms. */
  createdAt: number;
}

type Either = Static<typeof OrderView> | Static<typeof ClientOpenOrder>;

export function openOrderRow(o: Either): OpenOrderRow {
  if ('original_size' in o) {
    return { id: o.id, maker: o.maker_address, owner: o.owner, side: o.side, outcome: o.outcome, assetId: o.asset_id, price: o.price, originalSize: o.original_size, sizeMatched: o.size_matched, type: o.order_type, createdAt: o.created_at * 1000 };
  }
  return { id: o.id, maker: o.makerAddress, owner: o.owner, side: o.side, outcome: o.outcome, assetId: o.assetId, price: o.price, originalSize: o.originalSize, sizeMatched: o.sizeMatched, type: o.type, createdAt: Date.parse(o.createdAt) };
}
