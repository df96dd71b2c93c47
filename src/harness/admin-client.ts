/**
 * A client of the admin API for test code (what `startExchange` hands a test, and what the bin posts a
 * scenario with): the test clock, counterparties, scenarios, markets and funding, one method per route,
 * over HTTP with the bearer token. The wire types are the routes' own schemas (edge/schemas/), imported as
 * types only. A non-2xx answer throws an AdminError carrying the status and the body the service sent
 * (`{error, errors?}`), so a test can assert on a refusal as easily as on a success.
 *
 * Prices and sizes may be given as numbers or decimal strings, as the routes take them.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { UpsertEventsBody, WalletBalances } from '../edge/schemas/admin.ts';
import type {
  AdminCancelBody,
  AdminOrderBody,
  AdminOrderReply,
  AdvanceReply,
  ClockState,
  FillReply,
  Scenario,
  ScenarioReply,
  SetBookBody,
  SetBookReply,
} from '../edge/schemas/test-controls.ts';
import type { ExportSnapshotReply, RevertReply, SnapshotInfo, SnapshotList } from '../edge/schemas/snapshots.ts';

export type { AdminCancelBody, AdminOrderBody, ClockState, Scenario, ScenarioReply, SetBookBody, WalletBalances };
export type AdminOrder = Static<typeof AdminOrderReply>;
export type Advanced = Static<typeof AdvanceReply>;
export type Filled = Static<typeof FillReply>;
export type BookSet = Static<typeof SetBookReply>;
export type { ExportSnapshotReply, RevertReply, SnapshotInfo, SnapshotList };

/** An answer of the admin API other than 2xx. */
export class AdminError extends Error {
  constructor(
    readonly status: number,
    readonly body: { error?: string; errors?: unknown[] } & Record<string, unknown>,
    what: string,
  ) {
    super(`${what}: ${status} ${body.error ?? JSON.stringify(body)}${body.errors === undefined ? '' : ` ${JSON.stringify(body.errors)}`}`);
    this.name = 'AdminError';
  }
}

/** A market created by createMarket: its condition id and outcome tokens. */
export interface CreatedMarket {
  conditionId: string;
  yes: string;
  no: string;
}

export class AdminClient {
  constructor(
    readonly url: string,
    private readonly token: string,
  ) {}

  // ---- the test clock -----------------------------------------------------------------------------------

  clock(): Promise<ClockState> {
    return this.call('GET', '/admin/clock');
  }

  /** Stops the exchange's time where it stands: nothing happens by itself until an advance. */
  freeze(): Promise<ClockState> {
    return this.call('PUT', '/admin/clock', { frozen: true });
  }

  /** Lets the exchange's time run on from where it stands. */
  run(): Promise<ClockState> {
    return this.call('PUT', '/admin/clock', { frozen: false });
  }

  /**
   * Moves the time forward by `seconds`, or to `{ to }` (unix seconds or ISO 8601): everything due on the
   * way happens in order; resolves once it is committed.
   */
  advance(by: number | { to: number | string }): Promise<Advanced> {
    return this.call('POST', '/admin/clock/advance', typeof by === 'number' ? { seconds: by } : { to: by.to });
  }

  // ---- markets and money ----------------------------------------------------------------------------------

  /** POST /admin/events: events with their markets, in the catalog's shape; answers the stored events. */
  upsertEvents(events: UpsertEventsBody): Promise<unknown[]> {
    return this.call('POST', '/admin/events', events);
  }

  /** A binary market in an event of its own (tick 0.01 and minimum size 5 unless given). */
  async createMarket(m: { question: string; conditionId?: string; tick?: number; minSize?: number; negRisk?: boolean; makerFeeBps?: number; takerFeeBps?: number }): Promise<CreatedMarket> {
    // A question id of its own (the catalog derives the condition id from it) unless a condition id is given.
    const questionID = `0x${createHash('sha256').update(`${m.question}\u0000${randomUUID()}`).digest('hex')}`;
    const slug = `market-${questionID.slice(2, 14)}`;
    const [event] = (await this.upsertEvents([
      {
        title: m.question,
        slug,
        endDate: '2099-12-31T00:00:00Z',
        negRisk: m.negRisk ?? false,
        markets: [
          {
            question: m.question,
            slug,
            ...(m.conditionId === undefined ? { questionID } : { conditionId: m.conditionId }),
            orderPriceMinTickSize: m.tick ?? 0.01,
            orderMinSize: m.minSize ?? 5,
            negRisk: m.negRisk ?? false,
            makerBaseFee: m.makerFeeBps ?? 0,
            takerBaseFee: m.takerFeeBps ?? 0,
          },
        ],
      },
    ])) as Array<{ markets: Array<{ conditionId: string; clobTokenIds: string }> }>;
    const market = event!.markets[0]!;
    const [yes, no] = JSON.parse(market.clobTokenIds) as [string, string];
    return { conditionId: market.conditionId, yes, no };
  }

  resolve(conditionId: string, winner: 0 | 1): Promise<unknown> {
    return this.call('POST', `/admin/markets/${conditionId}/resolve`, { winningOutcomeIndex: winner });
  }

  setMarketStatus(conditionId: string, status: { active?: boolean; closed?: boolean; archived?: boolean; acceptingOrders?: boolean }): Promise<unknown> {
    return this.call('POST', `/admin/markets/${conditionId}/status`, status);
  }

  deposit(address: string, usdc: number | string): Promise<WalletBalances> {
    return this.call('POST', `/admin/wallets/${address}/deposit`, { amount: String(usdc) });
  }

  withdraw(address: string, usdc: number | string): Promise<WalletBalances> {
    return this.call('POST', `/admin/wallets/${address}/withdraw`, { amount: String(usdc) });
  }

  /** Outcome tokens for a wallet (complete sets; the other half to the house wallet); `price`: their cost. */
  credit(address: string, tokenId: string, amount: number | string, price?: number | string): Promise<WalletBalances> {
    return this.call('POST', `/admin/wallets/${address}/tokens`, { tokenId, amount: String(amount), ...(price === undefined ? {} : { price }) });
  }

  balances(address: string): Promise<WalletBalances> {
    return this.call('GET', `/admin/wallets/${address}`);
  }

  // ---- counterparties ----------------------------------------------------------------------------------

  /** An order as any wallet, without its key (admin-made: owner "admin"). */
  placeOrder(order: AdminOrderBody): Promise<AdminOrder> {
    return this.call('POST', '/admin/orders', order);
  }

  /** Cancels orders by id (anyone's), or `{ wallet, market?, asset_id? }`. */
  cancelOrders(what: readonly string[] | { wallet: string; market?: string; asset_id?: string }): Promise<{ canceled: string[]; not_canceled: Record<string, string> }> {
    return this.call('DELETE', '/admin/orders', Array.isArray(what) ? { orderIds: what } : what);
  }

  /** A token's book in one call, from named makers (default the house maker), funded as needed. */
  setBook(tokenId: string, book: SetBookBody): Promise<BookSet> {
    return this.call('PUT', `/admin/books/${tokenId}`, book);
  }

  /** A trade against a resting order: a taker (default the house taker) takes up to its price, `size` or all it has left. */
  fill(orderId: string, o: { size?: number | string; taker?: string } = {}): Promise<Filled> {
    return this.call('POST', `/admin/orders/${orderId}/fill`, o);
  }

  // ---- scenarios ------------------------------------------------------------------------------------------

  startScenario(s: Scenario): Promise<ScenarioReply> {
    return this.call('POST', '/admin/scenarios', s);
  }

  scenarios(): Promise<ScenarioReply[]> {
    return this.call('GET', '/admin/scenarios');
  }

  cancelScenarios(): Promise<ScenarioReply[]> {
    return this.call('DELETE', '/admin/scenarios');
  }

  // ---- snapshots ------------------------------------------------------------------------------------------

  /** Saves the whole exchange under `name` (default `snapshot-<n>`); answers once it is whole on disk. */
  snapshot(name?: string): Promise<SnapshotInfo> {
    return this.call('POST', '/admin/snapshots', name === undefined ? {} : { name });
  }

  /** Adds a state file (a packed snapshot or a snapshot directory on the service's machine) as a snapshot. */
  importState(path: string, name?: string): Promise<SnapshotInfo> {
    return this.call('POST', '/admin/snapshots', { state: path, ...(name === undefined ? {} : { name }) });
  }

  snapshots(): Promise<SnapshotList> {
    return this.call('GET', '/admin/snapshots');
  }

  deleteSnapshot(name: string): Promise<SnapshotInfo> {
    return this.call('DELETE', `/admin/snapshots/${encodeURIComponent(name)}`);
  }

  /** Puts the whole exchange back to the snapshot; answers once reads answer its state. Sockets are closed with 1012. */
  revert(name: string): Promise<RevertReply> {
    return this.call('POST', `/admin/snapshots/${encodeURIComponent(name)}/revert`);
  }

  /** Writes the snapshot as a state file at `path` (absolute, on the service's machine). */
  exportSnapshot(name: string, path: string): Promise<ExportSnapshotReply> {
    return this.call('POST', `/admin/snapshots/${encodeURIComponent(name)}/export`, { path });
  }

  /** The exchange's state hash and journal seq now (equal to a snapshot's right after a revert to it). */
  stateHash(): Promise<{ seq: number; stateHash: string }> {
    return this.call('GET', '/admin/state-hash');
  }

  // ---- the transport --------------------------------------------------------------------------------------

  /** Any admin route: the parsed answer, or an AdminError. */
  async call<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
    const r = await fetch(`${this.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = { error: text };
    }
    if (r.status < 200 || r.status > 299) throw new AdminError(r.status, (parsed ?? {}) as AdminError['body'], `${method} ${path}`);
    return parsed as T;
  }
}
