/**
 * The catalog's writer: upserts (planned and applied in one transaction, all or nothing), market status
 * flags, resolutions, profiles; and the listeners told which markets changed (engine registration).
 *
 * A write resolves only once its listeners have finished with it: the engine's registration answers once
 * the market's `market` event is committed (app.ts), so whoever is answered after a write (the admin
 * routes) can read the market on every route that serves committed state, its book included.
 */
import { apiError, type ApiError } from '../../domain/errors.ts';
import type { Store } from '../../journal/env.ts';
import { profileKey } from '../../journal/keys.ts';
import type { Clock } from '../../runtime/clock.ts';
import type { EventInput, MarketStatusBody, Profile, ProfileBody } from '../../edge/schemas/admin.ts';
import { sameValue, type MarketRec, type TradingMarket } from './catalog-index.ts';
import { applyPlan, bumpGeneration, writeMarket } from './apply.ts';
import { TokenMemo, toTradingMarket } from './derive.ts';
import type { Problem } from './input.ts';
import { getRec, marketIdByCondition } from './lookups.ts';
import { planUpsert, summarize, type IdFloors, type UpsertSummary } from './planner.ts';

export type UpsertOutcome =
  | { ok: true; eventIds: string[]; summary: UpsertSummary; changedMarkets: TradingMarket[] }
  | { ok: false; errors: Problem[] };

/** Told the markets a committed write changed; a returned promise holds the write's answer until it settles. */
export type MarketsListener = (markets: TradingMarket[]) => void | Promise<unknown>;

export type StatusOutcome = { ok: true; market: MarketRec } | { ok: false; error: ApiError };

export class CatalogWriter {
  private readonly listeners = new Set<MarketsListener>();
  private readonly tokenMemo = new TokenMemo();

  constructor(private readonly store: Store, private readonly clock: Clock) {}

  private nowIso(): string {
    return new Date(this.clock.now()).toISOString();
  }

  /**
   * Called after each committed change with the markets whose record changed (engine registration); the
   * write resolves once what `cb` returns has settled.
   */
  onMarketsChanged(cb: MarketsListener): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  private async notify(markets: TradingMarket[]): Promise<void> {
    if (markets.length === 0) return;
    const pending: Promise<unknown>[] = [];
    for (const cb of this.listeners) {
      const p = cb(markets);
      if (p !== undefined) pending.push(p);
    }
    await Promise.all(pending);
  }

  /** Validates without writing: the problems, or what an upsert would change. */
  check(inputs: readonly EventInput[]): { ok: true; summary: UpsertSummary } | { ok: false; errors: Problem[] } {
    const plan = planUpsert(this.store, inputs, this.nowIso(), undefined, this.tokenMemo);
    return plan.errors.length > 0 ? { ok: false, errors: plan.errors } : { ok: true, summary: summarize(plan) };
  }

  /**
   * Upserts events with their markets, tags and series in one transaction: everything or nothing.
   * `floors`: see planUpsert (batched imports pass the whole file's).
   */
  async upsertEvents(inputs: readonly EventInput[], floors?: IdFloors): Promise<UpsertOutcome> {
    const now = this.nowIso();
    const outcome = (await this.store.root.childTransaction(() => {
      const plan = planUpsert(this.store, inputs, now, floors, this.tokenMemo);
      if (plan.errors.length > 0) return { ok: false, errors: plan.errors } satisfies UpsertOutcome;
      applyPlan(this.store, plan);
      const changedMarkets = [...plan.markets.values()].filter((p) => p.changed).map((p) => toTradingMarket(p.next));
      return { ok: true, eventIds: plan.eventOrder, summary: summarize(plan), changedMarkets } satisfies UpsertOutcome;
    })) as UpsertOutcome;
    if (outcome.ok) await this.notify(outcome.changedMarkets);
    return outcome;
  }

  /** Flips status flags of a market; closing, archiving or deactivating also stops order intake. */
  setMarketStatus(conditionId: string, patch: MarketStatusBody): Promise<StatusOutcome> {
    return this.changeMarket(conditionId, (old, now) => {
      const resolved = old.winner >= 0;
      if (resolved && (patch.closed === false || patch.acceptingOrders === true)) {
        return { ok: false, error: apiError('PM_ERR_MARKET_RESOLVED', { conditionId }) };
      }
      const next: MarketRec = { ...old };
      if (patch.active !== undefined) next.active = patch.active;
      if (patch.closed !== undefined) next.closed = patch.closed;
      if (patch.archived !== undefined) next.archived = patch.archived;
      const canAccept = next.enableOrderBook && next.active && !next.closed && !next.archived;
      if (patch.acceptingOrders === true && !canAccept) {
        const message = 'a market accepts orders only when it is active, not closed, not archived and has an order book';
        return { ok: false, error: apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: [{ path: 'acceptingOrders', message }] }) };
      }
      next.acceptingOrders = patch.acceptingOrders ?? (next.acceptingOrders && canAccept);
      if (next.acceptingOrders && next.acceptingOrdersTimestamp === '') next.acceptingOrdersTimestamp = now;
      if (sameValue(next, old)) return { ok: true, market: old };
      next.updatedAt = now;
      return next;
    });
  }

  /**
   * Records a resolution the engine has accepted: the market closes, stops taking orders and its
   * winning token is marked. Idempotent for the same winner.
   */
  markResolved(conditionId: string, winner: 0 | 1): Promise<StatusOutcome> {
    return this.changeMarket(conditionId, (old, now) => {
      if (old.winner >= 0) return old.winner === winner ? { ok: true, market: old } : { ok: false, error: apiError('PM_ERR_MARKET_RESOLVED', { conditionId }) };
      return { ...old, winner, closed: true, acceptingOrders: false, resolvedAt: now, updatedAt: now };
    });
  }

  /**
   * One market's change in one transaction: `change` refuses, answers the market as it is (nothing
   * written), or returns its next record (written, the generation bumped). Listeners hear of the market
   * whenever the outcome is ok, and the outcome is given once they are done with it.
   */
  private async changeMarket(conditionId: string, change: (old: MarketRec, now: string) => StatusOutcome | MarketRec): Promise<StatusOutcome> {
    const now = this.nowIso();
    const outcome = (await this.store.root.childTransaction(() => {
      const id = marketIdByCondition(this.store, conditionId);
      const old = id === undefined ? undefined : getRec<MarketRec>(this.store, 'market', id);
      if (!old) return { ok: false, error: apiError('PM_ERR_ADMIN_MARKET_UNKNOWN', { conditionId }) } satisfies StatusOutcome;
      const next = change(old, now);
      if ('ok' in next) return next;
      writeMarket(this.store, old, next);
      bumpGeneration(this.store);
      return { ok: true, market: next } satisfies StatusOutcome;
    })) as StatusOutcome;
    if (outcome.ok) await this.notify([toTradingMarket(outcome.market)]);
    return outcome;
  }

  /** Replaces a wallet's display profile (absent fields become ""). */
  async putProfile(address: string, body: ProfileBody): Promise<Profile> {
    const profile: Profile = {
      address,
      name: body.name ?? '',
      pseudonym: body.pseudonym ?? '',
      bio: body.bio ?? '',
      profileImage: body.profileImage ?? '',
      profileImageOptimized: body.profileImageOptimized ?? '',
    };
    await this.store.profiles.put(profileKey(address), profile);
    return profile;
  }
}
