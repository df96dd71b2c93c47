/**
 * Builder trades (GET /builder/trades, and the trade shape GET /data/trades shares): a page of the fills a
 * filter names, walked along the most selective index projections/market-data.ts keeps for them (trade id,
 * token, market, wallet, builder code, else all, bounded by the time filters), and each fill in the
 * platform's trade shapes, seen from its taker. Reads LMDB synchronously, through the store's RangeOverlay;
 * a fill is read from the journal by its seq (journal/codecs/fill-codec.ts) and its status from the trade
 * lifecycle (journal/trades.ts).
 *
 * Separate from the book reads of market-data.ts (which hands its calls here) because it is a listing over
 * journal views with its own paging and shapes, and shares nothing with the books but the outcome labels.
 * Imports domain/, journal/ (keys, fills, trades), the store's types and the wire types (as types).
 */
import { END_CURSOR, encodeCursor } from '../domain/cursor.ts';
import type { FillEvent } from '../domain/events.ts';
import { DEFAULT_OUTCOMES } from '../domain/market-rules.ts';
import { formatPips, formatUnits } from '../domain/units.ts';
import type { BuilderTrade, ClientBuilderTrade } from '../edge/schemas/market-data.ts';
import { readFill } from '../journal/codecs/fill-codec.ts';
import { tradeStateOf } from '../journal/trades.ts';
import { builderTradeKeys, type BuilderTradeDim } from '../journal/keys.ts';
import type { BuilderTradeFields, BuilderTradeIdEntry, MarketDataStore } from '../projections/market-data.ts';
import { takerTradeFields } from '../projections/trade-fields.ts';

export const BUILDER_TRADES_PAGE_SIZE = 100;

export interface BuilderTradeFilter {
  id?: string;
  /** The row's maker_address: the taker order's wallet. */
  makerAddress?: string;
  market?: string;
  assetId?: string;
  /** Unix seconds: trades strictly before / strictly after. */
  before?: number;
  after?: number;
  builderCode?: string;
}

export class BuilderTradesReader {
  constructor(
    private readonly md: Pick<MarketDataStore, 'views' | 'store'>,
    private readonly outcomes: (conditionId: string) => readonly [string, string] | undefined,
  ) {}

  /**
   * One page of builder trades matching every given filter, oldest first, starting `offset` matches in.
   * The listing walks the most selective index the filters name (trade id, then token, market, wallet,
   * builder code, else all), bounded by the time filters; the other filters are checked on each fill.
   */
  builderTrades(f: BuilderTradeFilter, offset: number, limit?: number): { rows: BuilderTrade[]; next: string };
  builderTrades<T>(f: BuilderTradeFilter, offset: number, limit: number, out: (fill: FillEvent, x: BuilderTradeFields) => T): { rows: T[]; next: string };
  builderTrades<T>(
    f: BuilderTradeFilter,
    offset: number,
    limit = BUILDER_TRADES_PAGE_SIZE,
    out: (fill: FillEvent, x: BuilderTradeFields) => T = (fill, x) => this.tradeOut(fill, x) as T,
  ): { rows: T[]; next: string } {
    const fromMs = f.after !== undefined ? (f.after + 1) * 1000 : 0;
    const toMs = f.before !== undefined ? f.before * 1000 : Number.MAX_SAFE_INTEGER;
    const matches = (fill: FillEvent): boolean =>
      fill.ts >= fromMs &&
      fill.ts < toMs &&
      (f.market === undefined || fill.conditionId === f.market) &&
      (f.assetId === undefined || fill.takerTokenId === f.assetId) &&
      (f.makerAddress === undefined || fill.takerWallet === f.makerAddress) &&
      (f.builderCode === undefined || fill.builder.toLowerCase() === f.builderCode);

    if (f.id !== undefined) {
      const entry = this.md.views.get<BuilderTradeIdEntry>(builderTradeKeys.byId(f.id));
      const fill = entry === undefined ? undefined : this.fill(entry.s);
      const rows = fill !== undefined && matches(fill) && offset === 0 ? [out(fill, entry as BuilderTradeFields)] : [];
      return { rows, next: END_CURSOR };
    }
    if (fromMs >= toMs) return { rows: [], next: END_CURSOR };

    let dim: BuilderTradeDim = 'all';
    let value = '';
    if (f.assetId !== undefined) [dim, value] = ['asset', f.assetId];
    else if (f.market !== undefined) [dim, value] = ['market', f.market];
    else if (f.makerAddress !== undefined) [dim, value] = ['user', f.makerAddress];
    else if (f.builderCode !== undefined) [dim, value] = ['builder', f.builderCode];
    const range = builderTradeKeys.range(dim, value, fromMs, toMs);

    const rows: T[] = [];
    let skipped = 0;
    let more = false;
    for (const e of this.md.views.range<BuilderTradeFields>(range.start, range.end)) {
      const fill = this.fill(e.key[3] as number);
      if (fill === undefined || !matches(fill)) continue;
      if (skipped < offset) {
        skipped++;
        continue;
      }
      if (rows.length === limit) {
        more = true;
        break;
      }
      rows.push(out(fill, e.value));
    }
    return { rows, next: more ? encodeCursor(offset + rows.length) : END_CURSOR };
  }

  private fill(seq: number): FillEvent | undefined {
    return readFill(this.md.store.fills, seq);
  }

  private outcome(conditionId: string, index: 0 | 1): string {
    return (this.outcomes(conditionId) ?? DEFAULT_OUTCOMES)[index];
  }

  /** A builder trade in the platform V2 client's camelCase BuilderTrade (GET /builder/trades, clob-client-v2 shapes). */
  clientBuilderTrade(f: FillEvent, x: BuilderTradeFields): ClientBuilderTrade {
    const t = this.tradeOut(f, x);
    return {
      id: t.id,
      tradeType: 'TAKER',
      takerOrderHash: t.taker_order_id,
      builder: f.builder.toLowerCase(),
      market: t.market,
      assetId: t.asset_id,
      side: t.side,
      size: t.size,
      sizeUsdc: formatUnits(f.takerUsdc),
      price: t.price,
      status: t.status,
      outcome: t.outcome,
      outcomeIndex: f.takerOutcome,
      owner: t.owner,
      maker: t.maker_address,
      transactionHash: t.transaction_hash,
      matchTime: t.match_time,
      bucketIndex: t.bucket_index,
      fee: t.fee_rate_bps,
      feeUsdc: formatUnits(f.takerFee),
      builderFee: '0',
      builderCode: f.builder.toLowerCase(),
      createdAt: t.match_time,
      updatedAt: t.last_update,
    };
  }

  /**
   * A fill in the platform's trade shape, seen from its taker. `x` carries what the fill itself does not:
   * the position among the taker order's fills and both orders' fee rates. The status and its time are the
   * trade's as committed (journal/trades.ts): CONFIRMED at the match unless the fill was deferred.
   */
  tradeOut(f: FillEvent, x: BuilderTradeFields): BuilderTrade {
    const time = new Date(f.ts).toISOString();
    const state = tradeStateOf(this.md.store, f);
    return {
      ...takerTradeFields(f),
      fee_rate_bps: String(x.tf),
      price: formatPips(f.takerPricePips),
      status: state.status,
      outcome: this.outcome(f.conditionId, f.takerOutcome),
      maker_address: f.takerWallet,
      owner: f.takerOwner,
      transaction_hash: f.txHash,
      match_time: time,
      last_update: new Date(state.updatedAt).toISOString(),
      bucket_index: x.b,
      type: 'TAKER',
      maker_orders: [
        {
          order_id: f.makerOrderId,
          maker_address: f.makerWallet,
          owner: f.makerOwner,
          matched_amount: formatUnits(f.size),
          fee_rate_bps: String(x.mf),
          price: formatPips(f.makerPricePips),
          asset_id: f.makerTokenId,
          outcome: this.outcome(f.conditionId, f.makerOutcome),
          side: f.makerSide,
        },
      ],
    };
  }
}
