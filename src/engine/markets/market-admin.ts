/**
 * Market administration: registering a market or changing its parameters, and resolving it.
 *
 * Registration is checked (condition id, two distinct token ids not used by another market, a tick the
 * books support, minimum size, fee rates), applied to the market table, journaled (a `market` event and
 * its row) and sent to the market's shard (OP_REGISTER_MARKET, with the strings by MessagePort; a tick
 * change rebuilds the book there). Registering the same parameters again changes nothing. A registration
 * has no answer of its own: its effects are in memory at once and committed with the turn's batch, so a
 * caller whose answer must show the market on committed state (the catalog's writes, app.ts) awaits
 * afterCommit() after it, as orders are answered after their commit. Resolution first
 * cancels every resting order of the market in its shard (CANCELED_MARKET_RESOLVED, settled like any
 * cancel), then records the winner in the ledger and the journal, and answers after that commit.
 *
 * Invariants: while a resolution is in flight (`resolving`) the market takes no order and no second
 * resolution; once resolved it stays resolved.
 */
import { Errors, apiError } from '../../domain/errors.ts';
import { resolveEvent, type MarketEvent } from '../../domain/events.ts';
import { BPS, TICK_PIPS } from '../../domain/market-rules.ts';
import type { JournalWriter } from '../../journal/writer.ts';
import { CancelReason } from '../book/api.ts';
import type { MarketInput, OpResult } from '../engine-types.ts';
import type { GroupCommit } from '../group-commit.ts';
import { LedgerCode, LedgerError, type Ledger } from '../ledger/ledger.ts';
import type { Lifecycle } from '../lifecycle.ts';
import { parametersOf, rowOf, type MarketState, type MarketTable } from './market-table.ts';
import type { MarketMeta, ResultRecord } from '../shard/protocol.ts';
import type { ShardLink } from '../shard/shard-link.ts';

const TICKS = new Set(TICK_PIPS);

/** Throws PM_ERR_BAD_REQUEST unless `m` can be registered next to the markets already known. */
function checkMarketInput(m: MarketInput, markets: MarketTable): void {
  if (typeof m.conditionId !== 'string' || m.conditionId.length === 0) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'conditionId is required' });
  if (!Array.isArray(m.tokenIds) || m.tokenIds.length !== 2 || m.tokenIds[0] === m.tokenIds[1] || !m.tokenIds.every((t) => typeof t === 'string' && t.length > 0)) {
    throw apiError('PM_ERR_BAD_REQUEST', { detail: 'tokenIds must be two distinct token ids' });
  }
  if (!TICKS.has(m.tickPips)) throw apiError('PM_ERR_BAD_REQUEST', { detail: `tickPips must be one of ${[...TICKS].sort((a, b) => a - b).join(', ')}` });
  if (!Number.isSafeInteger(m.minSizeUnits) || m.minSizeUnits < 0) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'minSizeUnits must be a non-negative integer' });
  for (const f of [m.makerFeeBps, m.takerFeeBps]) {
    if (!Number.isInteger(f) || f < 0 || f > BPS) throw apiError('PM_ERR_BAD_REQUEST', { detail: `fee rates must be integers in [0, ${BPS}] bps` });
  }
  for (const t of m.tokenIds) {
    const other = markets.token(t);
    if (other !== undefined && other.market.conditionId !== m.conditionId) throw apiError('PM_ERR_BAD_REQUEST', { detail: `token ${t} belongs to another market` });
  }
  const existing = markets.get(m.conditionId);
  if (existing !== undefined && (existing.tokenIds[0] !== m.tokenIds[0] || existing.tokenIds[1] !== m.tokenIds[1])) {
    throw apiError('PM_ERR_BAD_REQUEST', { detail: `market ${m.conditionId} already has other token ids` });
  }
}

function sameParameters(existing: MarketState, m: MarketInput): boolean {
  return (
    existing.tickPips === m.tickPips &&
    existing.minSizeUnits === m.minSizeUnits &&
    existing.makerFeeBps === m.makerFeeBps &&
    existing.takerFeeBps === m.takerFeeBps &&
    existing.acceptingOrders === m.acceptingOrders &&
    existing.negRisk === m.negRisk
  );
}

export class MarketAdmin {
  constructor(
    private readonly markets: MarketTable,
    private readonly ledger: Ledger,
    private readonly link: ShardLink,
    private readonly writer: JournalWriter,
    private readonly commit: GroupCommit,
    private readonly life: Lifecycle,
  ) {}

  /** Idempotent; creates the market or updates its parameters and flags. Throws on invalid input. */
  register(m: MarketInput): void {
    this.life.assertUp();
    checkMarketInput(m, this.markets);
    const existing = this.markets.get(m.conditionId);
    let mk: MarketState;
    if (existing === undefined) {
      const tokenIds: [string, string] = [m.tokenIds[0], m.tokenIds[1]];
      mk = this.markets.add({ conditionId: m.conditionId, marketId: this.markets.size + 1, tokenIds, ...parametersOf(m), resolved: -1 });
    } else {
      if (sameParameters(existing, m)) return;
      mk = Object.assign(existing, parametersOf(m));
    }
    const ev: MarketEvent = {
      type: 'market',
      seq: 0,
      ts: 0,
      conditionId: mk.conditionId,
      marketId: mk.marketId,
      tokenIds: mk.tokenIds,
      ...parametersOf(mk),
    };
    this.writer.append(ev);
    this.writer.putMarket(rowOf(mk));
    this.commit.scheduleFlush();
    void this.sendToShard(mk);
  }

  /** Creates the market's book in its shard or updates it, with the last trade prices it shows. */
  sendToShard(m: MarketState): Promise<ResultRecord> {
    const meta: MarketMeta = {
      marketId: m.marketId,
      conditionId: m.conditionId,
      tokenIds: m.tokenIds,
      negRisk: m.negRisk,
      lastTradePips: [this.markets.lastTrades.get(m.tokenIds[0])?.pricePips ?? 0, this.markets.lastTrades.get(m.tokenIds[1])?.pricePips ?? 0],
    };
    return this.link.register(m, meta);
  }

  /** Cancels the market's open orders (CANCELED_MARKET_RESOLVED), then records the winner. */
  resolve(conditionId: string, winningOutcome: 0 | 1): Promise<OpResult> {
    if (this.life.down) return Promise.resolve({ ok: false, code: Errors.PM_ERR_ENGINE_DOWN.result });
    const m = this.markets.get(conditionId);
    if (m === undefined) return Promise.resolve({ ok: false, code: Errors.PM_ERR_MARKET_UNKNOWN.result });
    if (winningOutcome !== 0 && winningOutcome !== 1) return Promise.resolve({ ok: false, code: Errors.PM_ERR_BAD_REQUEST.result });
    if (m.resolved >= 0 || m.resolving) return Promise.resolve({ ok: false, code: Errors.PM_ERR_MARKET_RESOLVED.result });
    m.resolving = true;
    return new Promise((resolve) => {
      this.link.cancelAllMarket(m, CancelReason.MARKET_RESOLVED, () => {
        const code = this.ledger.resolve(conditionId, winningOutcome);
        if (code !== LedgerCode.OK) throw new LedgerError(`resolve of ${conditionId} failed with ${code}`);
        m.resolved = winningOutcome;
        m.resolving = false;
        this.writer.append(resolveEvent(conditionId, winningOutcome, m.tokenIds));
        this.writer.putMarket(rowOf(m));
        this.commit.ack(resolve, { ok: true, code: 0 });
      });
    });
  }
}
