/**
 * What the diagnoses of refusals may cost (issue 39, finding 2), priced by their work and shared fairly.
 *
 * Work is counted in bytes hashed: an HMAC diagnosis costs the bytes each of its HMACs hashes (64 more per
 * HMAC for the key's blocks), and a signature recovery RECOVERY_COST (a native secp256k1 recovery is about
 * 60 µs of a pool thread, what hashing 32 KiB takes on this thread). A diagnosis reserves its most before
 * it starts and gives back what it did not use, so the work done never passes what was taken.
 *
 * Three token buckets must all have the work, or the diagnosis is skipped (the refusal stands; its reason
 * says the variants were not tried):
 *   per network   the client address's /24 (IPv4) or /64 (IPv6) (domain/ip.ts addressPrefix): a flood
 *                 from one network spends its own share and no one else's;
 *   per wallet    the wallet the request names (the API key's, the L1 address, the order's signer), at
 *                 twice a network's rate, so that no single network can empty it;
 *   in all        the service's whole allowance, what the diagnoses may take of a core.
 * So an L1 flood with random signatures from one network leaves every other network's and wallet's
 * diagnoses as they were: before, one shared bucket of 50 diagnoses a second went to the flood (18,363 of
 * 18,598 refusals said "diagnosis is busy"). What remains: enough networks together can spend the whole
 * allowance, and a wallet named from more networks than its share can spend its bucket; a diagnosis is
 * never the decision, so that costs reasons, not answers.
 *
 * Bounded: at most MAX_PARTIES buckets of each kind are kept (a Map in recency order, about 150 bytes an
 * entry); past it the least recently charged is forgotten, which only ever gives a forgotten party its
 * full bucket back. The clock is injectable for tests.
 */
import { addressPrefix } from '../../domain/ip.ts';

/** What a signature recovery costs, in hashed-byte equivalents. */
export const RECOVERY_COST = 32 * 1024;

export interface BucketRate {
  /** Work per second, bytes hashed. */
  readonly perSecond: number;
  /** The most a bucket holds. */
  readonly burst: number;
}

/** The defaults: a network may take two full HMAC diagnoses of an order a second, the service 8 MiB/s. */
export const DIAGNOSIS_RATES = Object.freeze({
  network: { perSecond: 512 * 1024, burst: 2 * 1024 * 1024 },
  wallet: { perSecond: 1024 * 1024, burst: 4 * 1024 * 1024 },
  all: { perSecond: 8 * 1024 * 1024, burst: 16 * 1024 * 1024 },
});

/** Buckets kept per kind (networks, wallets). */
export const MAX_PARTIES = 10_000;

/** Who a diagnosis is for: the client address and the wallet the request names, when it names one. */
export interface DiagnosisParty {
  readonly ip?: string;
  readonly wallet?: string;
}

interface Bucket {
  tokens: number;
  at: number;
  readonly rate: BucketRate;
}

/** Refills `b` to time `t`. */
function refill(b: Bucket, t: number): Bucket {
  b.tokens = Math.min(b.rate.burst, b.tokens + ((t - b.at) / 1000) * b.rate.perSecond);
  b.at = t;
  return b;
}

class Buckets {
  private readonly map = new Map<string, Bucket>();
  constructor(private readonly rate: BucketRate, private readonly max: number) {}

  /** The bucket of `id` brought to time `t` (a forgotten or new one is full), moved to the recent end. */
  at(id: string, t: number): Bucket {
    let b = this.map.get(id);
    if (b === undefined) {
      b = { tokens: this.rate.burst, at: t, rate: this.rate };
      if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value!);
    } else {
      this.map.delete(id);
      refill(b, t);
    }
    this.map.set(id, b);
    return b;
  }

  get size(): number {
    return this.map.size;
  }
}

export class DiagnosisBudget {
  private readonly networks: Buckets;
  private readonly wallets: Buckets;
  private readonly all: Bucket;

  constructor(
    readonly rates: { network: BucketRate; wallet: BucketRate; all: BucketRate } = DIAGNOSIS_RATES,
    private readonly now: () => number = () => performance.now(),
    maxParties = MAX_PARTIES,
  ) {
    this.networks = new Buckets(rates.network, maxParties);
    this.wallets = new Buckets(rates.wallet, maxParties);
    this.all = { tokens: rates.all.burst, at: now(), rate: rates.all };
  }

  /** Takes `cost` from the party's network, its wallet and the whole service, or nothing when one lacks it. */
  take(by: DiagnosisParty, cost: number): boolean {
    const t = this.now();
    const parts = this.parts(by, t);
    if (parts.some((b) => b.tokens < cost)) return false;
    for (const b of parts) b.tokens -= cost;
    return true;
  }

  /** Gives back work a diagnosis took and did not use. */
  refund(by: DiagnosisParty, unused: number): void {
    if (!(unused > 0)) return;
    for (const b of this.parts(by, this.now())) b.tokens = Math.min(b.rate.burst, b.tokens + unused);
  }

  /** Buckets kept (tests). */
  get parties(): { networks: number; wallets: number } {
    return { networks: this.networks.size, wallets: this.wallets.size };
  }

  private parts(by: DiagnosisParty, t: number): Bucket[] {
    const out = [refill(this.all, t)];
    if (by.ip !== undefined) out.push(this.networks.at(addressPrefix(by.ip), t));
    if (by.wallet !== undefined) out.push(this.wallets.at(by.wallet.toLowerCase(), t));
    return out;
  }
}
