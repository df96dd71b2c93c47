/**
 * Scenarios (the sandbox's test controls; POST /admin/scenarios): a market, its books, named wallets and a
 * script of timed events in one JSON document (schemas/test-controls.ts `Scenario`), run against the test
 * clock. "A taker sweeps a level at t+5 s, the market resolves at t+60 s" is
 *
 *   { "market": {"question": "Will it rain?"},
 *     "wallets": {"mm": {"usdc": "1000", "yes": "500"}, "taker": {"usdc": "100"}},
 *     "books": [{"token": "yes", "maker": "mm", "bids": [{"price": "0.40", "size": "100"}], "asks": [{"price": "0.42", "size": "50"}]}],
 *     "script": [{"at": "+5s", "do": "sweep", "wallet": "taker", "token": "yes", "side": "BUY", "price": "0.42", "size": "50"},
 *                {"at": "+60s", "do": "resolve", "winner": "yes"}] }
 *
 * Starting one: the market is created (a new `question`; its condition id given or derived from it) or
 * found (`conditionId` alone), the wallets funded (USDC deposited, outcome tokens credited), the books set
 * (counterparties.ts), all before the answer; then each script event is a timer on the exchange's clock at
 * its time after the start, so it runs when the clock reaches it: in real time while the clock runs, or in
 * order within an advance (whose walk waits for each event's effects). An event that fails (a sweep that
 * meets nothing) is recorded with its error and the others still run. Wallets are named: a name without an
 * address gets one derived from it (keccak256 of "pm-exchange scenario <name>", test keys only), so a test
 * can name "mm" and "taker" and read their addresses from the answer.
 *
 * Bounds: a scenario has at most 1,000 events (its schema); the last MAX_KEPT scenarios are kept for GET
 * /admin/scenarios, older ones forgotten once none of their events is pending, and at most MAX_PENDING events
 * wait at once (a scenario past it is refused). DELETE /admin/scenarios cancels every pending event.
 */
import { keccak256 } from 'ox/Hash';
import { fromString } from 'ox/Hex';
import { privateKeyToAccount } from 'viem/accounts';
import { apiError } from '../../domain/errors.ts';
import { parsePips, parseUnits } from '../../domain/units.ts';
import type { Engine } from '../../engine/engine.ts';
import type { Clock, Timers } from '../../runtime/clock.ts';
import type { Logger } from '../../runtime/log.ts';
import type { CatalogWriter } from '../../projections/catalog.ts';
import type { Scenario, ScenarioEvent, ScenarioReply } from '../schemas/test-controls.ts';
import { HOUSE_MAKER, type BookLevel, type Counterparties } from './counterparties.ts';

const MAX_KEPT = 16;
const MAX_PENDING = 10_000;

export interface ScenarioDeps {
  counterparties: Counterparties;
  /** The catalog's writes: a new market, a status change. */
  catalog: { write: Pick<CatalogWriter, 'upsertEvents' | 'setMarketStatus'> };
  engine: Pick<Engine, 'market' | 'deposit'>;
  clock: Clock;
  timers: Timers;
  /** A resolution, engine then catalog (routes/admin.ts resolveInCatalog). */
  resolve: (conditionId: string, winner: 0 | 1) => Promise<unknown>;
  log: Pick<Logger, 'info' | 'warn'>;
}

interface RunEvent {
  atMs: number;
  spec: ScenarioEvent;
  state: 'pending' | 'done' | 'failed' | 'canceled';
  error?: string;
  timer?: unknown;
}

interface Run {
  id: number;
  name: string;
  conditionId: string;
  tokens: [string, string];
  wallets: Record<string, string>;
  startedAt: number;
  events: RunEvent[];
}

/** A scenario wallet's address from its name (a key anyone can derive: test keys only). */
export function scenarioWallet(name: string): string {
  return privateKeyToAccount(keccak256(fromString(`pm-exchange scenario ${name}`))).address.toLowerCase();
}

/** `at` in ms: seconds, or a number with its unit. */
export function atMs(at: number | string): number {
  if (typeof at === 'number') return Math.round(at * 1000);
  const m = /^\+?([0-9.]+)(ms|s|m|h|d)$/.exec(at)!;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'ms' | 's' | 'm' | 'h' | 'd'];
  return Math.round(Number(m[1]) * unit);
}

const decimal = (v: string | number) => (typeof v === 'number' ? String(v) : v);

export class Scenarios {
  private readonly runs: Run[] = [];
  private nextId = 1;
  private pending = 0;

  constructor(private readonly d: ScenarioDeps) {}

  /** Sets the scenario up and schedules its script; a bad one changes nothing and lists every problem. */
  async start(s: Scenario): Promise<ScenarioReply> {
    const problems = this.problems(s);
    if (problems.length > 0) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: problems });
    const script = s.script ?? [];
    if (this.pending + script.length > MAX_PENDING) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: [`at most ${MAX_PENDING} scenario events may wait at once (${this.pending} do)`] });

    const { conditionId, tokens } = await this.market(s);
    const wallets: Record<string, string> = {};
    for (const [name, w] of Object.entries(s.wallets ?? {})) wallets[name] = (w.address ?? scenarioWallet(name)).toLowerCase();
    const cp = this.d.counterparties;
    for (const [name, w] of Object.entries(s.wallets ?? {})) {
      if (w.usdc !== undefined) {
        const r = await this.d.engine.deposit(wallets[name]!, parseUnits(decimal(w.usdc))!);
        if (!r.ok) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: [`wallets.${name}.usdc: refused (${r.code})`] });
      }
      if (w.yes !== undefined) await cp.credit(wallets[name]!, tokens[0], parseUnits(decimal(w.yes))!, 5_000);
      if (w.no !== undefined) await cp.credit(wallets[name]!, tokens[1], parseUnits(decimal(w.no))!, 5_000);
    }
    for (const b of s.books ?? []) await this.book(b, tokens, wallets);

    const run: Run = { id: this.nextId++, name: s.name ?? '', conditionId, tokens, wallets, startedAt: this.d.clock.now(), events: [] };
    for (const spec of script) {
      const e: RunEvent = { atMs: run.startedAt + atMs(spec.at), spec, state: 'pending' };
      e.timer = this.d.timers.set(() => this.fire(run, e), e.atMs - this.d.clock.now());
      run.events.push(e);
      this.pending++;
    }
    this.keep(run);
    this.d.log.info({ scenario: run.id, name: run.name, conditionId, events: script.length }, 'scenario started');
    return this.reply(run);
  }

  list(): ScenarioReply[] {
    return this.runs.map((r) => this.reply(r));
  }

  /** Cancels every pending event of every scenario. */
  cancel(): ScenarioReply[] {
    for (const r of this.runs) {
      for (const e of r.events) {
        if (e.state !== 'pending') continue;
        this.d.timers.clear(e.timer);
        e.state = 'canceled';
        this.pending--;
      }
    }
    return this.list();
  }

  /** Names the script and books use that the wallets do not define. */
  private problems(s: Scenario): string[] {
    const out: string[] = [];
    const names = new Set(Object.keys(s.wallets ?? {}));
    const need = (name: string | undefined, where: string) => {
      if (name !== undefined && !names.has(name)) out.push(`${where}: no wallet named ${name}`);
    };
    if (s.market.conditionId === undefined && s.market.question === undefined) out.push('market: give `conditionId` (an existing market) or `question` (a new one)');
    // Every price and amount as integers (a number with more decimals than its unit has is refused here).
    const price = (v: string | number, where: string) => {
      const p = parsePips(decimal(v));
      if (p === undefined || p <= 0 || p >= 10_000) out.push(`${where}: a price strictly between 0 and 1, at most 4 decimals`);
    };
    const amount = (v: string | number | undefined, where: string) => {
      if (v === undefined) return;
      const u = parseUnits(decimal(v));
      if (u === undefined || u <= 0) out.push(`${where}: a positive amount, at most 6 decimals`);
    };
    for (const [name, w] of Object.entries(s.wallets ?? {})) for (const k of ['usdc', 'yes', 'no'] as const) amount(w[k], `wallets.${name}.${k}`);
    const levels = (ls: readonly Level[], where: string) => ls.forEach((l, j) => (price(l.price, `${where}[${j}].price`), amount(l.size, `${where}[${j}].size`)));
    (s.books ?? []).forEach((b, i) => (levels(b.bids, `books[${i}].bids`), levels(b.asks, `books[${i}].asks`)));
    (s.script ?? []).forEach((e, i) => {
      if (e.do === 'sweep' || e.do === 'place') (price(e.price, `script[${i}].price`), amount(e.size, `script[${i}].size`));
      if (e.do === 'book') (levels(e.bids, `script[${i}].bids`), levels(e.asks, `script[${i}].asks`));
      if (e.do === 'deposit') amount(e.usdc, `script[${i}].usdc`);
      if (e.do === 'credit') amount(e.amount, `script[${i}].amount`);
    });
    (s.books ?? []).forEach((b, i) => {
      need(b.maker, `books[${i}].maker`);
      [...b.bids, ...b.asks].forEach((l, j) => need(l.maker, `books[${i}] level ${j} maker`));
    });
    (s.script ?? []).forEach((e, i) => {
      if ('wallet' in e) need(e.wallet, `script[${i}].wallet`);
      if (e.do === 'book') {
        need(e.maker, `script[${i}].maker`);
        [...e.bids, ...e.asks].forEach((l, j) => need(l.maker, `script[${i}] level ${j} maker`));
      }
    });
    return out;
  }

  /** The scenario's market: found by condition id, or created from its question. */
  private async market(s: Scenario): Promise<{ conditionId: string; tokens: [string, string] }> {
    const m = s.market;
    let conditionId = m.conditionId?.toLowerCase();
    if (m.question !== undefined) {
      conditionId ??= keccak256(fromString(`pm-exchange scenario market ${m.question}`));
      const slug = `scenario-${conditionId.slice(2, 14)}`;
      const outcome = await this.d.catalog.write.upsertEvents([
        {
          title: m.question,
          slug,
          endDate: new Date(this.d.clock.now() + 365 * 86_400_000).toISOString(),
          markets: [
            {
              question: m.question,
              conditionId,
              slug,
              orderPriceMinTickSize: Number(m.tick ?? '0.01'),
              orderMinSize: m.minSize ?? 5,
              makerBaseFee: m.makerFeeBps ?? 0,
              takerBaseFee: m.takerFeeBps ?? 0,
            },
          ],
        },
      ]);
      if (!outcome.ok) throw apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: outcome.errors });
    }
    const em = this.d.engine.market(conditionId!);
    if (em === undefined) throw apiError('PM_ERR_ADMIN_MARKET_UNKNOWN', { conditionId: conditionId! });
    return { conditionId: em.conditionId, tokens: em.tokenIds };
  }

  private async book(b: { token: 'yes' | 'no'; maker?: string; bids: Level[]; asks: Level[] }, tokens: [string, string], wallets: Record<string, string>) {
    const level = (l: Level): BookLevel => ({ pricePips: parsePips(decimal(l.price))!, sizeUnits: parseUnits(decimal(l.size))!, maker: wallets[l.maker ?? b.maker ?? ''] ?? HOUSE_MAKER });
    return this.d.counterparties.setBook(tokens[b.token === 'yes' ? 0 : 1], b.bids.map(level), b.asks.map(level));
  }

  /** An event's time has come: runs it, records how it went. Returns the promise an advance waits for. */
  private fire(run: Run, e: RunEvent): Promise<void> {
    if (e.state !== 'pending') return Promise.resolve();
    this.pending--;
    return this.run(run, e.spec).then(
      () => {
        e.state = 'done';
      },
      (err: unknown) => {
        e.state = 'failed';
        e.error = err instanceof Error ? err.message : String(err);
        this.d.log.warn({ scenario: run.id, event: e.spec.do, error: e.error }, 'scenario event failed');
      },
    );
  }

  private async run(run: Run, e: ScenarioEvent): Promise<void> {
    const cp = this.d.counterparties;
    const token = (t: 'yes' | 'no') => run.tokens[t === 'yes' ? 0 : 1];
    switch (e.do) {
      case 'sweep':
        await cp.sweep(run.wallets[e.wallet]!, token(e.token), e.side, parsePips(decimal(e.price))!, parseUnits(decimal(e.size))!);
        return;
      case 'place':
        await cp.place({ wallet: run.wallets[e.wallet]!, tokenId: token(e.token), side: e.side, pricePips: parsePips(decimal(e.price))!, sizeUnits: parseUnits(decimal(e.size))!, orderType: e.orderType ?? 'GTC' });
        return;
      case 'cancel':
        await cp.cancelWallet(run.wallets[e.wallet]!, { conditionId: run.conditionId });
        return;
      case 'book':
        await this.book(e, run.tokens, run.wallets);
        return;
      case 'deposit': {
        const r = await this.d.engine.deposit(run.wallets[e.wallet]!, parseUnits(decimal(e.usdc))!);
        if (!r.ok) throw new Error(`deposit refused (${r.code})`);
        return;
      }
      case 'credit':
        await cp.credit(run.wallets[e.wallet]!, token(e.token), parseUnits(decimal(e.amount))!, 5_000);
        return;
      case 'status': {
        const patch = { ...(e.acceptingOrders === undefined ? {} : { acceptingOrders: e.acceptingOrders }), ...(e.closed === undefined ? {} : { closed: e.closed }) };
        const r = await this.d.catalog.write.setMarketStatus(run.conditionId, patch);
        if (!r.ok) throw r.error;
        return;
      }
      case 'resolve':
        await this.d.resolve(run.conditionId, e.winner === 'yes' ? 0 : 1);
        return;
    }
  }

  /** Keeps the run; forgets the oldest finished ones past MAX_KEPT. */
  private keep(run: Run): void {
    this.runs.push(run);
    while (this.runs.length > MAX_KEPT) {
      const i = this.runs.findIndex((r) => r.events.every((e) => e.state !== 'pending'));
      if (i < 0) break;
      this.runs.splice(i, 1);
    }
  }

  private reply(r: Run): ScenarioReply {
    return {
      id: r.id,
      name: r.name,
      market: { conditionId: r.conditionId, yes: r.tokens[0], no: r.tokens[1] },
      wallets: { ...r.wallets },
      startedAt: new Date(r.startedAt).toISOString(),
      events: r.events.map((e) => ({ at: new Date(e.atMs).toISOString(), do: e.spec.do, state: e.state, ...(e.error === undefined ? {} : { error: e.error }) })),
    };
  }
}

type Level = { price: string | number; size: string | number; maker?: string };
