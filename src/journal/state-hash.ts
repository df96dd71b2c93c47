/**
 * The state hash: one digest of the state recovery must agree on, whoever computed it (the tables,
 * recovery.ts; the journal's replay, replay.ts; the engine's memory, Engine.stateHash via engine/audit.ts).
 * Owns the canonical lines and their hash; computing a CanonicalState is each source's job. Separate because
 * three sides must compute the same lines, and none of them should import another to do it.
 *
 * State hash: SHA-256 over sorted lines
 *   B <wallet> <asset> <held>                      every non-zero balance (asset 'USDC' or a token id)
 *   O <conditionId> <seq> <orderId> <remaining>    every open order, per market in priority (seq) order
 *   M <conditionId> <resolved>                      every market (-1 trading, else the winning outcome)
 *   T <fillSeq> <status>                            every trade still settling (MATCHED, RETRYING, MINED)
 *   N <deposits - withdrawals>
 * Engine.stateHash() computes the same lines from memory, so "hash before shutdown == hash after restart"
 * and "tables == journal" are both checkable.
 *
 * Imports node:crypto and domain/ only.
 */
import { createHash } from 'node:crypto';
import type { TradeStatusName } from '../domain/events.ts';

export interface OpenOrderView {
  conditionId: string;
  seq: number;
  orderId: string;
  remaining: number;
}

/** The state the hash covers, whoever computed it. */
export interface CanonicalState {
  /** key `${wallet}\u0000${asset}` -> held units. */
  balances: Map<string, number>;
  openOrders: OpenOrderView[];
  /** conditionId -> resolved (-1 | 0 | 1). */
  markets: Map<string, number>;
  netDeposits: number;
  /** fill seq -> status of every trade still settling (MATCHED, RETRYING, MINED); absent = none. */
  trades?: Map<number, TradeStatusName>;
}

export const balanceMapKey = (wallet: string, asset: string) => wallet + '\u0000' + asset;

function canonicalLines(s: CanonicalState): string[] {
  const lines: string[] = [];
  for (const [k, held] of s.balances) {
    if (held === 0) continue;
    const [w, a] = k.split('\u0000');
    lines.push(`B ${w} ${a} ${held}`);
  }
  for (const o of s.openOrders) lines.push(`O ${o.conditionId} ${String(o.seq).padStart(16, '0')} ${o.orderId} ${o.remaining}`);
  for (const [cid, r] of s.markets) lines.push(`M ${cid} ${r}`);
  if (s.trades !== undefined) for (const [seq, status] of s.trades) lines.push(`T ${String(seq).padStart(16, '0')} ${status}`);
  lines.push(`N ${s.netDeposits}`);
  return lines.sort();
}

export function hashState(s: CanonicalState): string {
  const h = createHash('sha256');
  for (const line of canonicalLines(s)) h.update(line + '\n');
  return h.digest('hex');
}

/** First differing line of two states (for the refusal message); undefined when equal. */
export function diffStates(a: CanonicalState, b: CanonicalState): string | undefined {
  const la = new Set(canonicalLines(a));
  const lb = new Set(canonicalLines(b));
  for (const l of la) if (!lb.has(l)) return `tables have "${l}" which the journal does not`;
  for (const l of lb) if (!la.has(l)) return `journal has "${l}" which the tables do not`;
  return undefined;
}
