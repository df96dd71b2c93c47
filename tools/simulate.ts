/**
 * The demo's traders against any running instance, over HTTP: N market makers quoting around a drifting
 * fair price (inventory limits, quotes leaning against inventory) and M takers (random, and momentum that
 * follows the fair price's trend), for a bounded time at a target rate. A realistic workload for a bot's
 * counterparties, or a load generator that looks like a market rather than a benchmark.
 *
 *   ADMIN_TOKEN=secret npx tsx tools/simulate.ts [--url http://127.0.0.1:8080] [--makers 2] [--takers 3]
 *       [--markets 4] [--rate 10] [--duration 30] [--seed S] [--tick-ms 250] [--no-progress] [--json]
 *
 * The trading logic is the living demo's (src/demo/desk.ts, src/demo/trading.ts): this file is the
 * transport (`HttpVenue`: signed POST /orders, DELETE /orders and /cancel-all, GET /data/orders and
 * /data/order/:id, the admin wallet routes), a progress line and the summary. Setup: GET /exchange-info
 * (the order domains), `--markets` fresh binary markets through POST /admin/events (tick 0.01, minimum 5,
 * zero fees, a random opening price), wallets from seeded keys, each funded through POST
 * /admin/wallets/:address/deposit and given an API key by L1 auth (POST /auth/api-key, or derive when the
 * nonce is taken). Orders are signed with the service's EIP-712 encoder and native secp256k1
 * (src/demo/order-signer.ts); L1 and L2 headers are tools/load.ts's, with the spec's header names.
 *
 * The summary: orders sent and accepted, fills (distinct trades the wallets took part in), taker volume,
 * the makers' mean quoted spread, cancels, deposits, errors by class. Then checks, against the service:
 *   - fills: the trade ids the run counted from its orders equal the ids GET /data/trades lists for its
 *     wallets (taker or maker);
 *   - balances: every wallet's USDC and tokens (available + reserved, GET /admin/wallets/:address) equal
 *     the run's own account of them (deposits, and each order's fills as acknowledged and read back);
 *   - USDC conserved: the wallets' USDC plus one USDC per complete token set they hold in the run's
 *     markets equals their USDC at the start plus what the run deposited (the markets charge no fees).
 * The run cancels its orders at the end. Exit code 1 on a failed check.
 */
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { MAX_CANCEL_IDS } from '../src/edge/schemas/trading.ts';
import { MAX_ORDERS_PER_REQUEST } from '../src/edge/schemas/orders.ts';
import { Desk, type DeskMarket, type DeskStats, type Holdings, type OrderState, type PlaceOutcome, type Venue } from '../src/demo/desk.ts';
import { OrderSigner, type SignedOrder, type SigningWallet } from '../src/demo/order-signer.ts';
import { LIVE_WALK, MAKER_PRESETS, TAKER_PRESETS } from '../src/demo/trading.ts';
import type { OrderDomain } from '../src/edge/auth/eip712.ts';
import { HttpClient, l1Headers, l2Headers, textUnits, unitsText, type HttpAnswer } from './load.ts';

const UNITS = 1_000_000;

export interface SimulateOptions {
  /** Base URL of the instance. */
  url: string;
  adminToken: string;
  makers?: number;
  takers?: number;
  /** Fresh markets the run creates and trades. */
  markets?: number;
  /** Orders per second, all traders together. */
  rate?: number;
  /** Seconds of trading (the setup and the checks come on top). */
  duration?: number;
  /** Seed of the wallet keys and of every decision. Default: random. */
  seed?: number;
  tickMs?: number;
  /** A live progress line on stdout. Default: stdout is a TTY. */
  progress?: boolean;
  log?: (line: string) => void;
}

export interface SimulationReport {
  runId: string;
  seconds: number;
  /** The markets the run created. */
  markets: { conditionId: string; tokenIds: readonly [string, string] }[];
  wallets: string[];
  stats: DeskStats;
  /** The run's own account of each wallet at the end: USDC and tokens (available + reserved), in units. */
  holdings: { address: string; usdc: number; tokens: Record<string, number> }[];
  /** USDC the wallets held when the run started (earlier runs with the same seed leave balances). */
  startUsdc: number;
  /** Trade ids the run counted, and those the service lists for its wallets. */
  tradeIds: string[];
  serviceTradeIds: string[];
  checks: { ok: boolean; problems: string[] };
}

// ---- the HTTP venue ---------------------------------------------------------------------------------------

interface HttpWallet extends SigningWallet {
  passphrase: string;
  hmacKey: Buffer;
}

function json(a: HttpAnswer): any {
  try {
    return JSON.parse(a.body);
  } catch {
    return undefined;
  }
}

function expectOk(a: HttpAnswer, what: string): any {
  if (a.error) throw new Error(`${what}: ${a.error}`);
  if (a.status !== 200) throw new Error(`${what}: HTTP ${a.status} ${a.body.slice(0, 300)}`);
  return json(a);
}

/** A failed request's class: its status and error text (status 0: no HTTP answer). */
function failure(a: HttpAnswer): string {
  if (a.error) return `0 ${a.error}`;
  const body = json(a);
  return `${a.status} ${typeof body?.error === 'string' ? body.error : a.body.slice(0, 120)}`;
}

export class HttpVenue implements Venue {
  constructor(
    private readonly http: HttpClient,
    private readonly adminToken: string,
  ) {}

  private signed(w: HttpWallet, method: string, path: string, body?: unknown): Promise<HttpAnswer> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    return this.http.request(method, path, l2Headers(w, method, path.split('?')[0]!, text), text);
  }

  private admin(method: string, path: string, body?: unknown): Promise<HttpAnswer> {
    return this.http.request(method, path, { Authorization: `Bearer ${this.adminToken}` }, body === undefined ? undefined : JSON.stringify(body));
  }

  async place(items: readonly { wallet: SigningWallet; order: SignedOrder }[]): Promise<PlaceOutcome[]> {
    // POST /orders takes up to 15 orders of the wallet that signs the request.
    const chunks: { wallet: HttpWallet; from: number; to: number }[] = [];
    items.forEach((it, i) => {
      const last = chunks[chunks.length - 1];
      if (last && last.wallet === it.wallet && last.to - last.from < MAX_ORDERS_PER_REQUEST) last.to++;
      else chunks.push({ wallet: it.wallet as HttpWallet, from: i, to: i + 1 });
    });
    const out: PlaceOutcome[] = new Array(items.length);
    await Promise.all(
      chunks.map(async (c) => {
        const a = await this.signed(c.wallet, 'POST', '/orders', items.slice(c.from, c.to).map((it) => it.order.submission));
        const results = a.status === 200 ? json(a) : undefined;
        for (let i = c.from; i < c.to; i++) {
          const orderId = items[i]!.order.orderId;
          const r = Array.isArray(results) && results.length === c.to - c.from ? results[i - c.from] : undefined;
          if (r === undefined) out[i] = { ok: false, orderId, error: failure(a) };
          else if (r.success !== true) out[i] = { ok: false, orderId, error: `200 ${String(r.errorMsg)}` };
          else {
            out[i] = {
              ok: true,
              orderId: String(r.orderID),
              status: String(r.status),
              makingAmount: textUnits(r.makingAmount) ?? 0,
              takingAmount: textUnits(r.takingAmount) ?? 0,
              tradeIds: Array.isArray(r.tradeIDs) ? r.tradeIDs.map(String) : [],
            };
          }
        }
      }),
    );
    return out;
  }

  async cancel(items: readonly { wallet: SigningWallet; orderIds: readonly string[] }[]): Promise<void> {
    const calls: Promise<HttpAnswer>[] = [];
    for (const it of items) {
      for (let i = 0; i < it.orderIds.length; i += MAX_CANCEL_IDS) calls.push(this.signed(it.wallet as HttpWallet, 'DELETE', '/orders', it.orderIds.slice(i, i + MAX_CANCEL_IDS)));
    }
    await Promise.all(calls);
  }

  async cancelAll(wallet: SigningWallet): Promise<void> {
    expectOk(await this.signed(wallet as HttpWallet, 'DELETE', '/cancel-all'), 'DELETE /cancel-all');
  }

  /** The wallet's open orders in one listing (all pages); the ids not in it one by one. */
  async orderStates(wallet: SigningWallet, orderIds: readonly string[]): Promise<Map<string, OrderState>> {
    const wanted = new Set(orderIds);
    const out = new Map<string, OrderState>();
    const add = (o: any) => {
      if (o && wanted.has(o.id)) out.set(o.id, { status: String(o.status), sizeMatched: textUnits(o.sizeMatched) ?? 0, tradeIds: (o.associateTrades ?? []).map(String) });
    };
    for (let cursor = 'MA=='; cursor !== 'LTE='; ) {
      const page = expectOk(await this.signed(wallet as HttpWallet, 'GET', `/data/orders?next_cursor=${encodeURIComponent(cursor)}`), 'GET /data/orders');
      for (const o of page.data) add(o);
      cursor = page.next_cursor;
    }
    const rest = orderIds.filter((id) => !out.has(id));
    const answers = await Promise.all(rest.map((id) => this.http.request('GET', `/data/order/${id}`)));
    answers.forEach((a, i) => {
      if (a.status === 404) return;
      add(expectOk(a, `GET /data/order/${rest[i]}`).order);
    });
    return out;
  }

  async holdings(wallet: SigningWallet): Promise<Holdings> {
    const b = expectOk(await this.admin('GET', `/admin/wallets/${wallet.address}`), `GET /admin/wallets/${wallet.address}`);
    const total = (x: { available: string; reserved: string }) => (textUnits(x.available) ?? 0) + (textUnits(x.reserved) ?? 0);
    return { usdc: total(b.usdc), tokens: new Map((b.tokens as any[]).map((t) => [String(t.tokenId), total(t)])) };
  }

  async deposit(wallet: SigningWallet, units: number): Promise<void> {
    expectOk(await this.admin('POST', `/admin/wallets/${wallet.address}/deposit`, { amount: unitsText(units) }), `deposit to ${wallet.address}`);
  }
}

// ---- setup ------------------------------------------------------------------------------------------------

interface ExchangeInfo {
  authDomain: { name: string; version: string; chainId: number };
  orderDomain: OrderDomain;
  negRiskOrderDomain: OrderDomain;
}

async function createMarkets(http: HttpClient, adminToken: string, runId: string, count: number, seed: number): Promise<DeskMarket[]> {
  const conditionIds = Array.from({ length: count }, (_, m) => keccak256(toHex(`pm-exchange simulate ${runId} market ${m}`)).toLowerCase());
  // Opening prices spread over 0.20 .. 0.80, one per market, from the seed.
  const opening = conditionIds.map((_, m) => 20 + ((seed * 31 + m * 17) % 61));
  const event = {
    title: `Simulation ${runId}`,
    slug: `simulation-${runId}`,
    endDate: '2030-01-01T00:00:00Z',
    negRisk: false,
    markets: conditionIds.map((conditionId, m) => ({
      question: `Simulation ${runId} market ${m}?`,
      conditionId,
      slug: `simulation-${runId}-m${m}`,
      outcomePrices: [(opening[m]! / 100).toFixed(2), (1 - opening[m]! / 100).toFixed(2)],
      orderPriceMinTickSize: '0.01',
      orderMinSize: 5,
      makerBaseFee: 0,
      takerBaseFee: 0,
      acceptingOrders: true,
      enableOrderBook: true,
    })),
  };
  const stored = expectOk(await http.request('POST', '/admin/events', { Authorization: `Bearer ${adminToken}` }, JSON.stringify([event])), 'POST /admin/events')[0].markets as any[];
  const markets = conditionIds.map((conditionId, m): DeskMarket => {
    const s = stored.find((x) => String(x.conditionId).toLowerCase() === conditionId);
    if (!s) throw new Error(`POST /admin/events did not return market ${conditionId}`);
    const ids = (typeof s.clobTokenIds === 'string' ? JSON.parse(s.clobTokenIds) : s.clobTokenIds) as string[];
    return { conditionId, tokenIds: [ids[0]!, ids[1]!], tickPips: 100, minSizeUnits: 5 * UNITS, negRisk: false, makerFeeBps: 0, fairPips: opening[m]! * 100 };
  });
  // A market trades once the engine has registered it.
  for (const m of markets) {
    for (let attempt = 0; (await http.request('GET', `/book?token_id=${m.tokenIds[0]}`)).status !== 200; attempt++) {
      if (attempt >= 50) throw new Error(`market ${m.conditionId} never became tradable`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return markets;
}

async function setupWallet(http: HttpClient, info: ExchangeInfo, seed: number, index: number): Promise<HttpWallet> {
  const privateKey = keccak256(toHex(`pm-exchange simulate ${seed} wallet ${index}`));
  const account = privateKeyToAccount(privateKey);
  let creds = json(await http.request('POST', '/auth/api-key', await l1Headers(account, info.authDomain, 0n)));
  if (typeof creds?.apiKey !== 'string') {
    // The nonce is taken (a wallet of an earlier run with the same seed): its key derives again.
    creds = expectOk(await http.request('GET', '/auth/derive-api-key', await l1Headers(account, info.authDomain, 0n)), 'GET /auth/derive-api-key');
  }
  return { privateKey, address: account.address.toLowerCase(), apiKey: creds.apiKey, passphrase: creds.passphrase, hmacKey: Buffer.from(creds.secret, 'base64') };
}

/** Every trade id GET /data/trades lists for the wallet (all pages). */
async function serviceTrades(venue: HttpClient, w: HttpWallet): Promise<string[]> {
  const ids: string[] = [];
  for (let cursor = 'MA=='; cursor !== 'LTE='; ) {
    const path = `/data/trades?next_cursor=${encodeURIComponent(cursor)}`;
    const page = expectOk(await venue.request('GET', path, l2Headers(w, 'GET', '/data/trades')), 'GET /data/trades');
    for (const t of page.data) ids.push(String(t.id));
    cursor = page.next_cursor;
  }
  return ids;
}

// ---- the run ----------------------------------------------------------------------------------------------

export async function runSimulation(opts: SimulateOptions): Promise<SimulationReport> {
  const o = {
    makers: 2,
    takers: 3,
    markets: 4,
    rate: 10,
    duration: 30,
    seed: Math.floor(Math.random() * 2 ** 31),
    tickMs: 250,
    progress: process.stdout.isTTY === true,
    log: (line: string) => console.log(line),
    // An option given as undefined keeps its default.
    ...(Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) as SimulateOptions),
  };
  const http = new HttpClient(o.url.replace(/\/$/, ''), 8);
  try {
    const info = expectOk(await http.request('GET', '/exchange-info'), 'GET /exchange-info') as ExchangeInfo;
    const runId = `${o.seed.toString(36)}-${Date.now().toString(36)}`;
    const markets = await createMarkets(http, o.adminToken, runId, o.markets, o.seed);
    const wallets = await Promise.all(Array.from({ length: o.makers + o.takers }, (_, i) => setupWallet(http, info, o.seed, i)));
    const venue = new HttpVenue(http, o.adminToken);
    const before = await Promise.all(wallets.map((w) => venue.holdings(w)));
    const desk = new Desk(venue, {
      seed: o.seed,
      markets,
      makers: wallets.slice(0, o.makers).map((wallet, i) => ({ wallet, params: MAKER_PRESETS[i % MAKER_PRESETS.length]! })),
      takers: wallets.slice(o.makers).map((wallet, i) => ({ wallet, params: TAKER_PRESETS[i % TAKER_PRESETS.length]! })),
      walk: LIVE_WALK,
      takerShare: 0.35,
      makerFunding: { targetUnits: 50_000 * UNITS, floorUnits: 10_000 * UNITS },
      takerFunding: { targetUnits: 10_000 * UNITS, floorUnits: 2_000 * UNITS },
      signer: new OrderSigner({ normal: info.orderDomain, negRisk: info.negRiskOrderDomain }),
    });
    o.log(`simulate ${runId}: ${o.makers} makers, ${o.takers} takers, ${o.markets} markets, ${o.rate} orders/s for ${o.duration} s (seed ${o.seed})`);

    const bar = o.progress ? await progressLine(o.duration) : undefined;
    const t0 = Date.now();
    await desk.open(t0);
    let last = t0;
    let carry = 0;
    // The first round puts up every opening quote.
    let budget = Infinity;
    const roundFailures: Record<string, number> = {};
    for (;;) {
      const now = Date.now();
      if (now - t0 >= o.duration * 1000) break;
      try {
        await desk.tick(now, budget);
      } catch (e) {
        // A round whose reads or cancels failed (the service restarting, a timeout): counted, and the next
        // round carries on from what the service reports then.
        const cls = `round failed: ${e instanceof Error ? e.message : String(e)}`.slice(0, 160);
        roundFailures[cls] = (roundFailures[cls] ?? 0) + 1;
      }
      const s = desk.stats;
      bar?.update(Math.min(o.duration, Math.round((Date.now() - t0) / 1000)), progressFields(s, (Date.now() - t0) / 1000));
      await new Promise((r) => setTimeout(r, Math.max(0, o.tickMs - (Date.now() - now))));
      const t = Date.now();
      const due = ((t - last) / 1000) * o.rate + carry;
      budget = Math.floor(due);
      carry = due - budget;
      last = t;
    }
    await desk.close();
    const seconds = (Date.now() - t0) / 1000;
    bar?.update(o.duration, progressFields(desk.stats, seconds));
    bar?.stop();

    const service = new Set((await Promise.all(wallets.map((w) => serviceTrades(http, w)))).flat());
    const after = await Promise.all(wallets.map((w) => venue.holdings(w)));
    const problems = checkRun(desk, markets, before, after, service);
    return {
      runId,
      seconds,
      markets: markets.map((m) => ({ conditionId: m.conditionId, tokenIds: m.tokenIds })),
      wallets: wallets.map((w) => w.address),
      holdings: desk.holdings().map((h) => ({ address: h.address, usdc: h.usdc, tokens: Object.fromEntries(h.tokens) })),
      startUsdc: before.reduce((n, h) => n + h.usdc, 0),
      stats: { ...desk.stats, errors: { ...desk.stats.errors, ...roundFailures } },
      tradeIds: [...desk.tradeIds()].sort(),
      serviceTradeIds: [...service].sort(),
      checks: { ok: problems.length === 0, problems },
    };
  } finally {
    http.close();
  }
}

/** The module header's three checks; one line per problem. */
function checkRun(desk: Desk, markets: DeskMarket[], before: Holdings[], after: Holdings[], service: Set<string>): string[] {
  const problems: string[] = [];
  const ours = desk.tradeIds();
  const missing = [...ours].filter((id) => !service.has(id));
  const extra = [...service].filter((id) => !ours.has(id));
  if (missing.length || extra.length) problems.push(`fills: counted ${ours.size}, the service lists ${service.size} (${missing.length} not listed, ${extra.length} not counted)`);
  desk.holdings().forEach((h, i) => {
    const s = after[i]!;
    if (s.usdc !== h.usdc) problems.push(`${h.address}: USDC ${unitsText(s.usdc)} at the service, ${unitsText(h.usdc)} by the run's account`);
    for (const id of new Set([...s.tokens.keys(), ...h.tokens.keys()])) {
      const a = s.tokens.get(id) ?? 0;
      const b = h.tokens.get(id) ?? 0;
      if (a !== b) problems.push(`${h.address}: token ${id.slice(0, 12)}… ${unitsText(a)} at the service, ${unitsText(b)} by the run's account`);
    }
  });
  const sets = markets.reduce((n, m) => n + after.reduce((k, h) => k + (h.tokens.get(m.tokenIds[0]) ?? 0), 0), 0);
  const otherSide = markets.reduce((n, m) => n + after.reduce((k, h) => k + (h.tokens.get(m.tokenIds[1]) ?? 0), 0), 0);
  if (sets !== otherSide) problems.push(`tokens: the run's wallets hold ${unitsText(sets)} of outcome 0 and ${unitsText(otherSide)} of outcome 1 in the run's markets`);
  const start = before.reduce((n, h) => n + h.usdc, 0);
  const end = after.reduce((n, h) => n + h.usdc, 0);
  const deposited = desk.stats.depositedUnits;
  if (end + sets !== start + deposited) {
    problems.push(`USDC not conserved: ${unitsText(end)} held + ${unitsText(sets)} in complete sets != ${unitsText(start)} at the start + ${unitsText(deposited)} deposited`);
  }
  return problems;
}

// ---- progress and summary ---------------------------------------------------------------------------------

interface ProgressLine {
  update(value: number, fields: Record<string, string | number>): void;
  stop(): void;
}

async function progressLine(duration: number): Promise<ProgressLine> {
  const { default: cli } = await import('cli-progress');
  const bar = new cli.SingleBar(
    { format: '{bar} {value}/{total} s | orders {orders} ({rate}/s) | fills {fills} | volume {volume} USDC | spread {spread} | errors {errors}', stream: process.stdout, hideCursor: true },
    cli.Presets.shades_classic,
  );
  bar.start(duration, 0, progressFields(undefined, 0));
  return bar;
}

function progressFields(s: DeskStats | undefined, seconds: number): Record<string, string | number> {
  if (!s) return { orders: 0, rate: 0, fills: 0, volume: '0', spread: '-', errors: 0 };
  const errors = Object.values(s.errors).reduce((n, k) => n + k, 0);
  return {
    orders: s.orders,
    rate: seconds > 0 ? (s.orders / seconds).toFixed(1) : 0,
    fills: s.trades,
    volume: (s.takerVolumeUsdc / UNITS).toFixed(2),
    spread: s.meanSpreadPips > 0 ? (s.meanSpreadPips / 10_000).toFixed(4) : '-',
    errors,
  };
}

export function formatSummary(r: SimulationReport): string {
  const s = r.stats;
  const lines = [
    `simulate ${r.runId}: ${r.seconds.toFixed(1)} s, ${r.wallets.length} wallets, ${r.markets.length} markets`,
    `  orders     ${s.orders} sent, ${s.accepted} accepted (${(s.orders / r.seconds).toFixed(1)}/s), ${s.canceled} canceled`,
    `  fills      ${s.trades} trades`,
    `  volume     ${(s.takerVolumeUnits / UNITS).toFixed(2)} tokens, ${(s.takerVolumeUsdc / UNITS).toFixed(2)} USDC (taker side)`,
    `  spread     ${(s.meanSpreadPips / 10_000).toFixed(4)} mean quoted (best ask - best bid of the makers)`,
    `  deposits   ${(s.depositedUnits / UNITS).toFixed(2)} USDC`,
  ];
  const errors = Object.entries(s.errors).sort((a, b) => b[1] - a[1]);
  lines.push(`  errors     ${errors.length === 0 ? 'none' : ''}`);
  for (const [cls, n] of errors) lines.push(`    ${String(n).padStart(6)}  ${cls}`);
  lines.push(`  checks     ${r.checks.ok ? 'fills, balances and USDC agree with the service' : 'FAILED'}`);
  for (const p of r.checks.problems) lines.push(`    ${p}`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string', default: 'http://127.0.0.1:8080' },
      'admin-token': { type: 'string', default: process.env.ADMIN_TOKEN ?? '' },
      makers: { type: 'string' },
      takers: { type: 'string' },
      markets: { type: 'string' },
      rate: { type: 'string' },
      duration: { type: 'string' },
      seed: { type: 'string' },
      'tick-ms': { type: 'string' },
      'no-progress': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(fileURLToPath(import.meta.url) + ': see the header comment.');
    console.log('ADMIN_TOKEN=T npx tsx tools/simulate.ts [--url U] [--makers 2] [--takers 3] [--markets 4] [--rate 10] [--duration 30] [--seed S] [--json]');
    return;
  }
  const num = (name: string, v: string | undefined, min: number, max: number): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n) || n < min || n > max) throw new Error(`--${name}: expected a number in ${min}..${max}, got ${v}`);
    return n;
  };
  if (!values['admin-token']) throw new Error('--admin-token (or ADMIN_TOKEN) is required: the wallets are funded and the markets created through the admin API');
  const report = await runSimulation({
    url: values.url!,
    adminToken: values['admin-token'],
    makers: num('makers', values.makers, 1, 64),
    takers: num('takers', values.takers, 0, 64),
    markets: num('markets', values.markets, 1, 100),
    rate: num('rate', values.rate, 0.1, 100_000),
    duration: num('duration', values.duration, 1, 86_400),
    seed: num('seed', values.seed, 0, 2 ** 31 - 1),
    tickMs: num('tick-ms', values['tick-ms'], 10, 60_000),
    progress: values['no-progress'] || values.json ? false : undefined,
    log: values.json ? () => undefined : undefined,
  });
  console.log(values.json ? JSON.stringify(report, null, 2) : formatSummary(report));
  process.exitCode = report.checks.ok ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exitCode = 1;
  });
}
