/**
 * The rows of GET /trades as JSON text (TradeRows). A row is one party's side of a fill, rendered from the
 * fill (read only through `fill(seq)`: the stored form belongs to journal/codecs/fill-codec.ts), the market's
 * catalog metadata (market-meta.ts) and the wallet's profile. Fills never change, so a rendered row is
 * kept (bounded, about least recently used first out) and reused while the metadata and profile entries it
 * was written from are still the cached ones: the newest trades of a wallet or market are what clients
 * poll, and rendering one costs a random read of its fill plus number formatting.
 */
import type { FillEvent } from '../../domain/events.ts';
import { pipsToNumber, unitsToNumber } from '../../domain/units.ts';
import type { Store } from '../../journal/env.ts';
import { readFill } from '../../journal/codecs/fill-codec.ts';
import { TAKER_ROLE } from '../../journal/keys.ts';
import { getProfile } from '../catalog.ts';
import type { MarketMeta, MarketMetas } from './market-meta.ts';
import { flat } from './page-cache.ts';

/** Wallet profiles (trade rows) are re-read at least this often. */
export const PROFILE_TTL_MS = 5_000;
const PROFILE_CACHE_LIMIT = 100_000;
/** Rendered trade rows kept (about 0.5 KB each). */
export const RENDERED_TRADES_LIMIT = 100_000;

/** JSON text of every price in pips from 0 to 1 (number to text is the costliest part of a trade row). */
const PRICE_TEXT = Array.from({ length: 10_001 }, (_, pips) => String(pipsToNumber(pips)));
const priceText = (pips: number) => PRICE_TEXT[pips] ?? String(pipsToNumber(pips));

interface ProfileEntry {
  /** The profile fields as a JSON fragment (`"name":...,"profileImageOptimized":...`). */
  json: string;
  expiresAt: number;
}

/** A trade row as written, and the cache entries it was written from (compared by identity). */
interface RenderedTrade {
  conditionId: string;
  wallet: string;
  meta: MarketMeta;
  profile: ProfileEntry;
  json: string;
  /** Served since the eviction scan last passed it. */
  used: boolean;
}

/** A first-in first-out queue of numbers in a fixed ring (never more than `capacity` at once). */
export class IdRing {
  private readonly ids: Float64Array;
  private head = 0;
  count = 0;

  constructor(capacity: number) {
    this.ids = new Float64Array(capacity);
  }

  push(id: number): void {
    this.ids[(this.head + this.count) % this.ids.length] = id;
    this.count++;
  }

  shift(): number {
    const id = this.ids[this.head];
    this.head = (this.head + 1) % this.ids.length;
    this.count--;
    return id;
  }
}

export class TradeRows {
  /** Rendered trade rows by seq x 2 + role; `order` holds each id once, oldest first (see evict). */
  private readonly rendered = new Map<number, RenderedTrade>();
  private readonly order: IdRing;
  private readonly profiles = new Map<string, ProfileEntry>();

  constructor(
    private readonly store: Store,
    private readonly metas: MarketMetas,
    private readonly limit = RENDERED_TRADES_LIMIT,
  ) {
    this.order = new IdRing(limit);
  }

  /** The row of fill `seq` seen from `role`, as JSON text; undefined when the fills table has no such fill. */
  row(seq: number, role: number, now: number): string | undefined {
    const id = seq * 2 + role;
    const hit = this.rendered.get(id);
    // Unexpired entries are still the cached ones (see MarketMetas.get): no lookup needed.
    if (
      hit !== undefined &&
      (now < hit.meta.expiresAt || this.metas.get(hit.conditionId, now) === hit.meta) &&
      (now < hit.profile.expiresAt || this.profileEntry(hit.wallet, now) === hit.profile)
    ) {
      hit.used = true;
      return hit.json;
    }
    const f = this.fill(seq);
    if (f === undefined) return undefined;
    const r = this.render(f, role, now);
    if (hit === undefined) {
      if (this.rendered.size >= this.limit) this.evict();
      this.order.push(id);
    }
    this.rendered.set(id, r);
    return r.json;
  }

  /**
   * The fill stored at `seq`. The only place the wallet data reads the fills table: its storage form
   * belongs to the journal (journal/codecs/fill-codec.ts).
   */
  private fill(seq: number): FillEvent | undefined {
    return readFill(this.store.fills, seq);
  }

  /**
   * Drops the oldest rendered row not used since it was last passed over (second chance): about least
   * recently used, without moving an entry on every hit. The order is a ring of ids beside the map:
   * taking a Map's first entry walks the slots of every entry deleted since its last rehash, and with
   * one deletion per insertion that made each eviction cost up to the whole map (measured: 7 ms pages).
   */
  private evict(): void {
    const ring = this.order;
    for (let i = 0; i < 64 && ring.count > 1; i++) {
      const id = ring.shift();
      const r = this.rendered.get(id)!;
      if (!r.used) {
        this.rendered.delete(id);
        return;
      }
      r.used = false;
      ring.push(id);
    }
    this.rendered.delete(ring.shift());
  }

  /**
   * The profile fields of a wallet as a JSON fragment. Cached for PROFILE_TTL_MS: a global page names up
   * to `limit` wallets, and profiles change only through the admin API (unannounced).
   */
  private profileEntry(wallet: string, now: number): ProfileEntry {
    const hit = this.profiles.get(wallet);
    if (hit !== undefined && now < hit.expiresAt) return hit;
    const p = getProfile(this.store, wallet);
    const q = JSON.stringify;
    const json = `"name":${q(p.name)},"pseudonym":${q(p.pseudonym)},"bio":${q(p.bio)},"profileImage":${q(p.profileImage)},"profileImageOptimized":${q(p.profileImageOptimized)}`;
    if (hit !== undefined && hit.json === json) {
      // Unchanged: the same entry, so that the rows written with it stay valid.
      hit.expiresAt = now + PROFILE_TTL_MS;
      return hit;
    }
    if (this.profiles.size >= PROFILE_CACHE_LIMIT) this.profiles.clear();
    const entry = { json, expiresAt: now + PROFILE_TTL_MS };
    this.profiles.set(wallet, entry);
    return entry;
  }

  /** One trade row as JSON text, fields in the order of the Trade schema, with what it was written from. */
  private render(f: FillEvent, role: number, now: number): RenderedTrade {
    const taker = role === TAKER_ROLE;
    const wallet = (taker ? f.takerWallet : f.makerWallet).toLowerCase();
    const outcome = taker ? f.takerOutcome : f.makerOutcome;
    const conditionId = f.conditionId;
    const meta = this.metas.get(conditionId, now);
    const profile = this.profileEntry(wallet, now);
    const j = meta.json;
    const side = (taker ? f.takerSide : f.makerSide) === 'BUY' ? '"BUY"' : '"SELL"';
    const price = priceText(taker ? f.takerPricePips : f.makerPricePips);
    const ts = Math.floor(f.ts / 1000);
    const q = JSON.stringify;
    const json = flat(
      `{"proxyWallet":${q(wallet)},"side":${side},"asset":${j.assets[outcome]},"conditionId":${j.conditionId},` +
      `"size":${unitsToNumber(f.size)},"price":${price},"timestamp":${ts},"title":${j.title},"slug":${j.slug},"icon":${j.icon},` +
      `"eventSlug":${j.eventSlug},"outcome":${j.outcomes[outcome]},"outcomeIndex":${outcome},${profile.json},` +
      `"transactionHash":${q(f.txHash)},"usdcSize":${unitsToNumber(taker ? f.takerUsdc : f.makerUsdc)}}`,
    );
    return { conditionId, wallet, meta, profile, json, used: false };
  }
}
