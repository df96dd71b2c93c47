// Types of the package's entry (index.js; the implementation is src/harness/, which
// test/harness/index.test.ts holds to these declarations at typecheck). docs/sandbox.md, "Drive it from a test suite".

export interface ExchangeOptions {
  /** What a fresh store starts with: `static` (default) the demo catalog and funded wallets; `off` no catalog; `live` demo traders too. */
  demo?: 'static' | 'off' | 'live';
  /** The store's directory (kept by close()); default a temporary one that close() removes. */
  dataDir?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The admin API's bearer token; default a random one. */
  adminToken?: string;
  /** A JSON configuration file overlaid on the defaults (as CONFIG_FILE). */
  configFile?: string;
  /** Configuration overlaid last, e.g. `{ sandbox: { trades: { minedDelayMs: 5000 } } }`. */
  config?: Record<string, unknown>;
  /** Freeze the exchange's clock before the test starts. */
  frozen?: boolean;
  /** A scenario started once the exchange is up: the object, or a JSON file's path. */
  scenario?: Scenario | string;
  /** A state file to start from (a packed snapshot written by `admin.exportSnapshot`, or a snapshot directory); also kept as a snapshot to revert to. */
  state?: string;
  /** Level of the service's log on stderr; default `silent`. */
  logLevel?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

/** A funded wallet: TEST KEYS ONLY (derived from public strings). */
export interface TestWallet {
  address: string;
  privateKey: `0x${string}`;
}

export interface Exchange {
  readonly url: string;
  readonly wsUrl: string;
  readonly adminToken: string;
  readonly dataDir: string;
  readonly chainId: number;
  readonly wallets: readonly TestWallet[];
  readonly admin: AdminClient;
  readonly scenario?: ScenarioReply;
  /** The service itself (src/node/app.ts App). */
  readonly app: unknown;
  close(): Promise<void>;
}

export declare function startExchange(options?: ExchangeOptions): Promise<Exchange>;

export interface ClockState {
  now: string;
  nowMs: number;
  time: number;
  frozen: boolean;
  offsetMs: number;
}

export interface Advanced {
  clock: ClockState;
  advanced: { from: string; to: string; timers: number; tookMs: number };
}

export interface WalletBalances {
  address: string;
  usdc: { available: string; reserved: string };
  tokens: Array<{ tokenId: string; asset: string; available: string; reserved: string }>;
}

type Decimal = string | number;

export interface AdminOrderBody {
  wallet: string;
  tokenId: string;
  side: 'BUY' | 'SELL';
  price: Decimal;
  size: Decimal;
  orderType?: 'GTC' | 'GTD' | 'FOK' | 'FAK';
  expiration?: number;
  postOnly?: boolean;
}

export interface AdminOrder {
  orderID: string;
  wallet: string;
  owner: 'admin';
  status: string;
  makingAmount: string;
  takingAmount: string;
  tradeIDs: string[];
}

export interface SetBookBody {
  maker?: string;
  bids: Array<{ price: Decimal; size: Decimal; maker?: string }>;
  asks: Array<{ price: Decimal; size: Decimal; maker?: string }>;
}

export interface BookSet {
  tokenId: string;
  market: string;
  canceled: number;
  orders: Array<{ side: 'BUY' | 'SELL'; price: string; size: string; maker: string; orderID: string; status: string; error?: string }>;
}

export interface Filled {
  trade: AdminOrder;
  order: { id: string; status: string; sizeMatched: string; originalSize: string };
}

export interface CreatedMarket {
  conditionId: string;
  yes: string;
  no: string;
}

type Outcome = 'yes' | 'no';
type Level = { price: Decimal; size: Decimal; maker?: string };
type At = number | string;

export type ScenarioEvent =
  | { at: At; do: 'sweep'; wallet: string; token: Outcome; side: 'BUY' | 'SELL'; price: Decimal; size: Decimal }
  | { at: At; do: 'place'; wallet: string; token: Outcome; side: 'BUY' | 'SELL'; price: Decimal; size: Decimal; orderType?: 'GTC' | 'FOK' | 'FAK' }
  | { at: At; do: 'cancel'; wallet: string }
  | { at: At; do: 'book'; token: Outcome; maker?: string; bids: Level[]; asks: Level[] }
  | { at: At; do: 'deposit'; wallet: string; usdc: Decimal }
  | { at: At; do: 'credit'; wallet: string; token: Outcome; amount: Decimal }
  | { at: At; do: 'status'; acceptingOrders?: boolean; closed?: boolean }
  | { at: At; do: 'resolve'; winner: Outcome };

export interface Scenario {
  name?: string;
  market: { conditionId?: string; question?: string; tick?: '0.1' | '0.01' | '0.001' | '0.0001'; minSize?: number; makerFeeBps?: number; takerFeeBps?: number };
  wallets?: Record<string, { address?: string; usdc?: Decimal; yes?: Decimal; no?: Decimal }>;
  books?: Array<{ token: Outcome; maker?: string; bids: Level[]; asks: Level[] }>;
  script?: ScenarioEvent[];
}

export interface ScenarioReply {
  id: number;
  name: string;
  market: { conditionId: string; yes: string; no: string };
  wallets: Record<string, string>;
  startedAt: string;
  events: Array<{ at: string; do: string; state: 'pending' | 'done' | 'failed' | 'canceled'; error?: string }>;
}

/** A named snapshot (POST /admin/snapshots). */
export interface SnapshotInfo {
  name: string;
  seq: number;
  stateHash: string;
  bytes: number;
  createdAt: string;
}

export interface SnapshotList {
  snapshots: SnapshotInfo[];
  max: number;
}

export interface RevertReply {
  snapshot: SnapshotInfo;
  from: { seq: number; stateHash: string };
  clock?: ClockState;
  tookMs: number;
}

export interface ExportSnapshotReply {
  snapshot: SnapshotInfo;
  path: string;
  bytes: number;
}

export declare class AdminError extends Error {
  readonly status: number;
  readonly body: { error?: string; errors?: unknown[] } & Record<string, unknown>;
}

export declare class AdminClient {
  constructor(url: string, token: string);
  readonly url: string;
  clock(): Promise<ClockState>;
  freeze(): Promise<ClockState>;
  run(): Promise<ClockState>;
  advance(by: number | { to: number | string }): Promise<Advanced>;
  upsertEvents(events: unknown[]): Promise<unknown[]>;
  createMarket(m: { question: string; conditionId?: string; tick?: number; minSize?: number; negRisk?: boolean; makerFeeBps?: number; takerFeeBps?: number }): Promise<CreatedMarket>;
  resolve(conditionId: string, winner: 0 | 1): Promise<unknown>;
  setMarketStatus(conditionId: string, status: { active?: boolean; closed?: boolean; archived?: boolean; acceptingOrders?: boolean }): Promise<unknown>;
  deposit(address: string, usdc: Decimal): Promise<WalletBalances>;
  withdraw(address: string, usdc: Decimal): Promise<WalletBalances>;
  credit(address: string, tokenId: string, amount: Decimal, price?: Decimal): Promise<WalletBalances>;
  balances(address: string): Promise<WalletBalances>;
  placeOrder(order: AdminOrderBody): Promise<AdminOrder>;
  cancelOrders(what: readonly string[] | { wallet: string; market?: string; asset_id?: string }): Promise<{ canceled: string[]; not_canceled: Record<string, string> }>;
  setBook(tokenId: string, book: SetBookBody): Promise<BookSet>;
  fill(orderId: string, o?: { size?: Decimal; taker?: string }): Promise<Filled>;
  startScenario(s: Scenario): Promise<ScenarioReply>;
  scenarios(): Promise<ScenarioReply[]>;
  cancelScenarios(): Promise<ScenarioReply[]>;
  snapshot(name?: string): Promise<SnapshotInfo>;
  importState(path: string, name?: string): Promise<SnapshotInfo>;
  snapshots(): Promise<SnapshotList>;
  deleteSnapshot(name: string): Promise<SnapshotInfo>;
  revert(name: string): Promise<RevertReply>;
  exportSnapshot(name: string, path: string): Promise<ExportSnapshotReply>;
  stateHash(): Promise<{ seq: number; stateHash: string }>;
  call<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T>;
}

/** The default counterparties of the admin API (test keys: keccak256 of "pm-exchange house maker" / "... taker"). */
export declare const HOUSE_MAKER: string;
export declare const HOUSE_TAKER: string;
/** A scenario wallet's address from its name. */
export declare function scenarioWallet(name: string): string;
