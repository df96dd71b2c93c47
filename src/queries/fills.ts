/**
 * A wallet's own fills, oldest first, for the trading API's GET /data/trades (bots recovering after a
 * restart page through everything they traded).
 *
 * The journal keeps no index of fills by wallet (journal/writer.ts: a fill costs it one appended record);
 * the wallet-trades projection does: one row per party of each fill under [wtr-w, wallet, role, seq]
 * (journal/keys.ts walletViewKeys). Read through the ViewStore, the rows include fills whose view writes
 * are still queued, and the projection applies a batch before its orders are acknowledged, so a bot
 * that got an order answered finds its fills here. The fills themselves come from the fills table.
 *
 * A market's latest fills (GET /markets/live-activity/{condition_id}) come from the same projection's per-market
 * taker rows ['wtr-m', conditionId, 0, seq], newest first: the data API's view, where a deferred fill appears
 * once its trade is MINED (its row then names the fill's seq fifth).
 *
 * Deferred fills (the trade lifecycle) are listed from the moment they match, whatever their trade's status:
 * their rows are ['wtr-d', wallet, seq] by the fill's seq; the wallet's trade rows of a deferred fill (under
 * its MINED move's seq, naming the fill fifth) are the data API's and are skipped here.
 */
import type { FillEvent } from '../domain/events.ts';
import type { Store } from '../journal/env.ts';
import { readFill } from '../journal/codecs/fill-codec.ts';
import { MAKER_ROLE, TAKER_ROLE, prefixRange, walletViewKeys, type Key } from '../journal/keys.ts';
import type { ViewStore } from '../projections/projector.ts';
import type { TradeEntry } from '../projections/wallets.ts';

/** The fill seqs of a view range, ascending: the key's last element, the trade rows of deferred fills left out. */
function seqsOf(rows: ReadonlyArray<{ key: unknown; value: unknown }>): number[] {
  const out: number[] = [];
  for (const r of rows) {
    const v = r.value as TradeEntry | number;
    if (Array.isArray(v) && v[4] !== undefined) continue;
    const key = r.key as Key;
    out.push(key[key.length - 1] as number);
  }
  return out;
}

/**
 * Journal seqs of every fill `wallet` took part in (either side, a self-trade once), ascending. Several
 * wallets (an API key's signer and its funders, edge/auth/funders.ts): the fills of any of them, each once.
 */
export function walletFillSeqs(views: ViewStore, wallet: string | readonly string[]): number[] {
  const lists: number[][] = [];
  for (const one of typeof wallet === 'string' ? [wallet] : wallet) {
    const w = one.toLowerCase();
    lists.push(
      seqsOf(views.range(walletViewKeys.tradesByWalletPrefix(w, TAKER_ROLE))),
      seqsOf(views.range(walletViewKeys.tradesByWalletPrefix(w, MAKER_ROLE))),
      seqsOf(views.range(walletViewKeys.deferredTradesPrefix(w))),
    );
  }
  // Every list is in seq order: merge them, a seq in several once.
  const at = lists.map(() => 0);
  const out: number[] = [];
  for (;;) {
    let next = Infinity;
    for (let k = 0; k < lists.length; k++) if (at[k] < lists[k].length && lists[k][at[k]] < next) next = lists[k][at[k]];
    if (next === Infinity) return out;
    for (let k = 0; k < lists.length; k++) if (at[k] < lists[k].length && lists[k][at[k]] === next) at[k]++;
    out.push(next);
  }
}

/** The fills of `walletFillSeqs`, decoded one at a time as the caller walks them. */
export function* walletFills(store: Store, views: ViewStore, wallet: string | readonly string[]): Generator<FillEvent> {
  for (const seq of walletFillSeqs(views, wallet)) {
    const f = readFill(store.fills, seq);
    if (f !== undefined) yield f;
  }
}

/**
 * The latest `limit` fills of a market, newest first (each fill once: its taker row). Reads the last `limit`
 * committed rows backwards and merges the rows still queued (trade rows are only ever added), so a busy
 * market costs `limit` rows, never a walk of its whole history (ViewStore.range merges whole prefixes).
 */
export function recentMarketFills(store: Store, views: ViewStore, conditionId: string, limit: number): FillEvent[] {
  const prefix = walletViewKeys.tradesByMarketPrefix(conditionId.toLowerCase(), TAKER_ROLE);
  const { start, end } = prefixRange(prefix);
  const bySeq = new Map<number, TradeEntry>();
  for (const { key, value } of views.db.getRange({ start: end, end: start, reverse: true, limit })) bySeq.set((key as Key)[3] as number, value as TradeEntry);
  for (const { key, value } of views.queuedUnder<TradeEntry>(prefix)) bySeq.set(key[3] as number, value);
  const out: FillEvent[] = [];
  for (const seq of [...bySeq.keys()].sort((a, b) => b - a).slice(0, limit)) {
    const v = bySeq.get(seq)!;
    const f = readFill(store.fills, v[4] ?? seq);
    if (f !== undefined) out.push(f);
  }
  return out;
}
