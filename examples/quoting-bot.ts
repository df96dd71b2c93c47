/**
 * The bot under test in examples/quoting-bot.test.ts: a small market maker written against the platform's
 * official client (@polymarket/clob-client-v2), as a bot for the real platform is. Nothing in it knows about
 * this exchange: pointed at the real host, it would trade there.
 *
 * Each round it cancels its quotes in its market, stops if the market no longer takes orders (closed,
 * resolved), reads the book, and quotes one tick inside it: a bid of
 * `size` tokens one tick above the best bid, and an ask of what it holds one tick below the best ask, both
 * good-till-date for `ttlSeconds` by the server's clock (GET /time: the client's useServerTime). It never
 * crosses the book, and it offers only what it can sell: the platform settles a trade after the match, and
 * until then what the trade delivered is not in the balance the client reads.
 */
import { AssetType, OrderType, Side, type ClobClient } from '@polymarket/clob-client-v2';

export interface Quotes {
  bid?: { price: number; orderId: string };
  ask?: { price: number; orderId: string };
  /** Why the ask was left out, when it was. */
  skippedAsk?: string;
  /** Why it quoted nothing at all, when the market stopped taking orders. */
  stopped?: string;
}

export class QuotingBot {
  constructor(
    private readonly client: ClobClient,
    readonly market: { conditionId: string; tokenId: string; tick: number },
    readonly o: { size: number; ttlSeconds: number },
  ) {}

  /** One round: its old quotes canceled, new ones one tick inside the book. */
  async step(): Promise<Quotes> {
    const { conditionId, tokenId, tick } = this.market;
    await this.client.cancelMarketOrders({ market: conditionId });
    const market = await this.client.getMarket(conditionId);
    if (market.closed || !market.accepting_orders) return { stopped: market.closed ? 'market closed' : 'not accepting orders' };
    const book = await this.client.getOrderBook(tokenId);
    // The platform lists bids ascending and asks descending: the best of each is last.
    const bestBid = Number(book.bids.at(-1)?.price ?? NaN);
    const bestAsk = Number(book.asks.at(-1)?.price ?? NaN);
    if (!(bestBid > 0 && bestAsk > 0)) return {};
    const bidPrice = round(bestBid + tick, tick);
    const askPrice = round(bestAsk - tick, tick);
    if (bidPrice >= askPrice) return {};
    const expiration = (await this.client.getServerTime()) + this.o.ttlSeconds;
    const out: Quotes = {};
    const bid = await this.client.createAndPostOrder({ tokenID: tokenId, price: bidPrice, size: this.o.size, side: Side.BUY, expiration }, { tickSize: String(tick) as '0.01' }, OrderType.GTD);
    if (bid.success) out.bid = { price: bidPrice, orderId: bid.orderID };
    // What it can sell: the balance leaves out what trades not settled yet delivered.
    const held = Number((await this.client.getBalanceAllowance({ asset_type: AssetType.CONDITIONAL, token_id: tokenId })).balance) / 1e6;
    if (held === 0) return { ...out, skippedAsk: 'nothing to sell yet' };
    const ask = await this.client.createAndPostOrder({ tokenID: tokenId, price: askPrice, size: held, side: Side.SELL, expiration }, { tickSize: String(tick) as '0.01' }, OrderType.GTD);
    if (ask.success) out.ask = { price: askPrice, orderId: ask.orderID };
    else out.skippedAsk = ask.errorMsg;
    return out;
  }
}

/** A price on the tick, without float noise (0.40 + 0.01 is 0.41000000000000003 in floating point). */
const round = (p: number, tick: number) => Number((Math.round(p / tick) * tick).toFixed(String(tick).split('.')[1]?.length ?? 0));
