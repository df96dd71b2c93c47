/**
 * A wallet's own fills, oldest first, for the trading API's GET /data/trades (bots recovering after a
 * restart page through everything they traded).
 *
 * The journal keeps no index of fills by wallet (journal/writer.ts: a fill costs it one appended record);
 * the wallet-trades projection does: one row per party of each fill under [wtr-w, wallet, role, seq]
 * (journal/keys.ts walletViewKeys). Read through the ViewStore, the rows include fills whose view writes
 * are still queued, and the projection applies a batch before its orders are acknowledged, so a bot
 * that got an order answered finds its fills here. The fills themselves come from the fills table.
 */
import type { FillEvent } from '../domain/events.ts';
import type { Store } from '../journal/env.ts';
import { readFill } from '../journal/fill-codec.ts';
import { MAKER_ROLE, TAKER_ROLE, walletViewKeys, type Key } from '../journal/keys.ts';
import type { ViewStore } from '../projections/projector.ts';

/** Journal seqs of every fill `wallet` took part in (either side, a self-trade once), ascending. */
export function walletFillSeqs(views: ViewStore, wallet: string): number[] {
  const w = wallet.toLowerCase();
  const taker = views.range(walletViewKeys.tradesByWalletPrefix(w, TAKER_ROLE));
  const maker = views.range(walletViewKeys.tradesByWalletPrefix(w, MAKER_ROLE));
  // Both lists are in seq order (the key's last element): merge them.
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < taker.length || j < maker.length) {
    const a = i < taker.length ? ((taker[i].key as Key)[3] as number) : Infinity;
    const b = j < maker.length ? ((maker[j].key as Key)[3] as number) : Infinity;
    const next = Math.min(a, b);
    if (a === next) i++;
    if (b === next) j++;
    out.push(next);
  }
  return out;
}

/** The fills of `walletFillSeqs`, decoded one at a time as the caller walks them. */
export function* walletFills(store: Store, views: ViewStore, wallet: string): Generator<FillEvent> {
  for (const seq of walletFillSeqs(views, wallet)) {
    const f = readFill(store.fills, seq);
    if (f !== undefined) yield f;
  }
}
