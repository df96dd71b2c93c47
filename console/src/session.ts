/**
 * What the person at the console has entered, held in this page's memory only: a wallet (its signer and
 * the API credentials derived for it) and the operator's admin token. Nothing is written to storage,
 * cookies or the URL, so a reload forgets both, and nothing here is ever rendered: the pages show the
 * wallet's address and whether a token is set, never a key, a secret or the token.
 *
 * The wallet's user channel (/ws/user) lives here too, one per session, so the ticket, the open orders and
 * the wallet page all follow the same socket. So do the proxy wallet and Safe it signs for (derived with the
 * factories GET /exchange-info names, as the service derives them): their orders are the key's too.
 */
import { useEffect, useState } from 'preact/hooks';
import type { PrivateKeyAccount } from 'viem/accounts';
import { deriveFunder } from '../../src/domain/signature-types.ts';
import type { UserChannelEvent } from '../../src/edge/schemas/stream.ts';
import { ApiError, call, exchangeInfo, type CallOptions } from './api.ts';
import { accountOf, l1Headers, l2Headers, type Creds } from './signing.ts';
import { Channel } from './stream.ts';

/** A small observable value: what the hooks below re-render on. */
class Cell<T> {
  private readonly listeners = new Set<(v: T) => void>();
  constructor(private value: T) {}
  get(): T {
    return this.value;
  }
  set(v: T): void {
    this.value = v;
    for (const l of [...this.listeners]) l(v);
  }
  subscribe(l: (v: T) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}

export function useCell<T>(cell: Cell<T>): T {
  const [v, setV] = useState(cell.get());
  useEffect(() => {
    setV(cell.get());
    return cell.subscribe(setV);
  }, [cell]);
  return v;
}

export interface Wallet {
  readonly address: string;
  /** How the wallet was chosen: "Demo wallet 2", or "Pasted key". */
  readonly label: string;
  readonly account: PrivateKeyAccount;
  readonly creds: Creds;
  readonly user: Channel<UserChannelEvent>;
  /** The wallets it signs for, by signatureType: [its own address, its proxy wallet, its Safe], lowercase. */
  readonly wallets: readonly [string, string, string];
}

export const wallet = new Cell<Wallet | undefined>(undefined);

/**
 * The API key of (address, nonce 0): derived when it exists, created otherwise. Deriving first keeps a
 * wallet at one key however often the console connects (a wallet holds at most auth.maxKeysPerWallet).
 */
async function credentialsOf(account: PrivateKeyAccount): Promise<Creds> {
  const info = await exchangeInfo();
  const derive = async () => call<Creds>('/auth/derive-api-key', { headers: await l1Headers(account, info) });
  try {
    return await derive();
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 400) throw e;
  }
  try {
    return await call<Creds>('/auth/api-key', { method: 'POST', headers: await l1Headers(account, info) });
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 400) throw e;
    // The key exists after all (another tab made it): derived again in the next second, since the same
    // signed request within its second is a replay, answered as the first one was.
    await new Promise((r) => setTimeout(r, 1005 - (Date.now() % 1000)));
    return derive();
  }
}

/** Connects the wallet of `privateKey`: throws the API's (or viem's) error when it cannot. */
export async function connectWallet(privateKey: string, label: string): Promise<Wallet> {
  const account = accountOf(privateKey);
  const creds = await credentialsOf(account);
  const factories = (await exchangeInfo()).walletFactories;
  wallet.get()?.user.close();
  const user = new Channel<UserChannelEvent>('/ws/user', () => ({ type: 'user', auth: creds, markets: [] }));
  const address = account.address.toLowerCase();
  const wallets = [address, deriveFunder(factories, address, 1), deriveFunder(factories, address, 2)] as const;
  const w: Wallet = { address, label, account, creds, user, wallets };
  wallet.set(w);
  user.start();
  return w;
}

export function disconnectWallet(): void {
  wallet.get()?.user.close();
  wallet.set(undefined);
}

/** A request signed with the connected wallet's L2 credentials. */
export async function signedCall<T>(w: Wallet, path: string, o: CallOptions = {}): Promise<T> {
  const body = o.body === undefined ? undefined : JSON.stringify(o.body);
  const headers = await l2Headers(w.account.address, w.creds, o.method ?? 'GET', path, body);
  return call<T>(path, { ...o, body, headers: { ...o.headers, ...headers } });
}

/** The admin token the operator entered (never rendered; '' = none). */
export const adminToken = new Cell<string>('');

export function adminCall<T>(path: string, o: CallOptions = {}): Promise<T> {
  return call<T>(path, { ...o, headers: { ...o.headers, authorization: `Bearer ${adminToken.get()}` } });
}
