/**
 * The in-process venue of the living demo: the path of POST /orders without the HTTP around it. Orders go
 * through `checkOrders` with the dependencies the trading routes build (schema, owner, signer, market,
 * amounts, EIP-712 signature recovered in the signature pool), then the sandbox's refusals (a maintenance
 * window, a post-only period, closed-only wallets: Sandbox.orderRefusal, as the route applies them), then
 * `Engine.placeOrder`, and are answered after the journal commit like any client's. Cancels are refused
 * during a maintenance window as the cancel routes are (425): nothing is canceled. Cancels, reads and
 * deposits use the engine's public API: the same calls as DELETE /orders, GET /data/order/:id and the admin
 * deposit route. Nothing here touches the ledger.
 */
import { ApiError, errorByResult } from '../domain/errors.ts';
import { MAX_ORDERS_PER_REQUEST } from '../edge/schemas/orders.ts';
import { checkOrders, type OrderCheckDeps, type OrderCheckResult } from '../edge/auth/order-check.ts';
import type { Engine } from '../engine/engine.ts';
import type { Sandbox } from '../edge/sandbox/sandbox.ts';
import type { SignedOrder, SigningWallet } from './order-signer.ts';
import type { Holdings, OrderState, PlaceOutcome, Venue } from './venue.ts';

type VenueEngine = Pick<Engine, 'placeOrder' | 'cancelOrders' | 'cancelAll' | 'getOrder' | 'balances' | 'deposit'>;
/** The sandbox's side of the order routes (edge/sandbox/sandbox.ts). */
export type VenueSandbox = Pick<Sandbox, 'orderRefusal' | 'placing'> & { readonly maintenance: Pick<Sandbox['maintenance'], 'phaseAt'> };

export class EngineVenue implements Venue {
  constructor(
    private readonly engine: VenueEngine,
    private readonly checks: OrderCheckDeps,
    private readonly sandbox: VenueSandbox,
  ) {}

  phase(): 'open' | 'maintenance' | 'post-only' {
    return this.sandbox.maintenance.phaseAt().phase;
  }

  async place(items: readonly { wallet: SigningWallet; order: SignedOrder }[]): Promise<PlaceOutcome[]> {
    // Checked as POST /orders checks a request: at most MAX_ORDERS_PER_REQUEST orders of one wallet at a time.
    const chunks: { wallet: SigningWallet; from: number; to: number }[] = [];
    for (let i = 0; i < items.length; i++) {
      const last = chunks[chunks.length - 1];
      if (last && last.wallet === items[i]!.wallet && last.to - last.from < MAX_ORDERS_PER_REQUEST) last.to++;
      else chunks.push({ wallet: items[i]!.wallet, from: i, to: i + 1 });
    }
    const checked: OrderCheckResult[] = (
      await Promise.all(
        chunks.map((c) =>
          checkOrders(
            items.slice(c.from, c.to).map((it) => it.order.submission),
            { apiKey: c.wallet.apiKey, address: c.wallet.address },
            this.checks,
          ),
        ),
      )
    ).flat();
    // Every check is back before the first order goes in, and they go in in the order given, in one turn:
    // the sequencer sees them in that order whatever order the signature threads answered in.
    const refused = checked.map((c) => (c.ok ? this.sandbox.orderRefusal(c.order) : undefined));
    const placed = checked.map((c, i) => (c.ok && refused[i] === undefined ? this.sandbox.placing(this.engine.placeOrder(c.order)) : undefined));
    const out: PlaceOutcome[] = [];
    for (let i = 0; i < checked.length; i++) {
      const c = checked[i]!;
      if (!c.ok) {
        out.push({ ok: false, orderId: c.orderId, error: c.error.message });
        continue;
      }
      if (refused[i] !== undefined) {
        out.push({ ok: false, orderId: c.order.orderId, error: refused[i]!.error.message });
        continue;
      }
      const r = await placed[i]!;
      out.push(
        r.ok
          ? { ok: true, orderId: r.orderId, status: r.status, makingAmount: r.makingAmount, takingAmount: r.takingAmount, tradeIds: r.tradeIds }
          : { ok: false, orderId: r.orderId, error: new ApiError(errorByResult(r.code), r.vars).message },
      );
    }
    return out;
  }

  async cancel(items: readonly { wallet: SigningWallet; orderIds: readonly string[] }[]): Promise<void> {
    if (this.phase() === 'maintenance') return;
    await Promise.all(items.map((it) => this.engine.cancelOrders(it.wallet.address, [...it.orderIds])));
  }

  async cancelAll(wallet: SigningWallet): Promise<void> {
    if (this.phase() === 'maintenance') return;
    await this.engine.cancelAll(wallet.address);
  }

  async orderStates(_wallet: SigningWallet, orderIds: readonly string[]): Promise<Map<string, OrderState>> {
    const out = new Map<string, OrderState>();
    for (const id of orderIds) {
      const r = this.engine.getOrder(id);
      if (r) out.set(id, { status: r.status, sizeMatched: r.sizeMatched, tradeIds: r.tradeIds });
    }
    return out;
  }

  async holdings(wallet: SigningWallet): Promise<Holdings> {
    const b = this.engine.balances(wallet.address);
    return { usdc: b.usdc.available + b.usdc.reserved, tokens: new Map(b.tokens.map((t) => [t.tokenId, t.available + t.reserved])) };
  }

  async deposit(wallet: SigningWallet, units: number): Promise<void> {
    const r = await this.engine.deposit(wallet.address, units);
    if (!r.ok) throw new Error(`demo deposit to ${wallet.address} failed with code ${r.code}`);
  }
}
