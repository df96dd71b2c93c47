/**
 * Funders: the wallets an order's signer may trade for. Owns the list of every wallet a signer acts for (its
 * own, its proxy wallet, its Safe: signatureType 0, 1, 2, derived by domain/signature-types.ts deriveFunder
 * with the configured factories, and cached) and what the platform client's `signature_type` parameter
 * names; the order checks, the caller's reads (balances, trades, notifications, rewards) and the user
 * channel use them. It decides nothing about an order.
 *
 * The rule is the platform exchange's (domain/signature-types.ts deriveFunder): a POLY_PROXY order's maker
 * must be the proxy factory's CREATE2 address for its signer, a POLY_GNOSIS_SAFE order's the Safe factory's.
 * So a platform account's funder is a pure function of its EOA, and that is how a local exchange without a
 * chain establishes that the signer controls the maker: the signature proves the signer, and only the
 * signer's derivation gives that address (finding another signer for it is a keccak preimage). Whether the
 * wallet is deployed does not matter, as on the platform, where the address exists before its contract.
 *
 * The factories and init-code hashes are configuration (auth.walletFactories, beside the order domains);
 * config/default.json carries the platform's for every profile (docs/decisions/authentication.md, "Proxy wallets and
 * Safes"):
 *   proxy factory  0xaB45c5A4B0c941a2F231C04C3f49182e1A254052   Polymarket/proxy-factories README
 *   proxy hash     0xd21df8dc65880a8606f09fe0ce3df9b8869287ab0b058be05aa9e8af6330a00b
 *   Safe factory   0xaacFeEa03eb1561C4e67d661e40682Bd20E3541b   Polymarket/proxy-factories README,
 *                                                                builder-relayer-client src/config (137 and 80002)
 *   Safe hash      0x2bce2127ff07fb632d16c8347c4ebf501f4841168bed00d9e6ef715ddb6fcecf
 *                                                                builder-relayer-client src/constants
 * Both hashes and factories are also the official Rust client's (Polymarket/rs-clob-client src/lib.rs,
 * WALLET_CONFIG, derive_proxy_wallet / derive_safe_wallet). CREATE2 is computed by viem.
 *
 * Cost and bounds: a signer's two derivations are four keccak256 calls in JS (about 70 µs measured, under
 * load, on this project's VMs), so they are cached: the order path pays a Map look-up. The wallets of up to
 * MAX_CACHED signers are kept (about 300 bytes each), the cache emptied when full. Signers reach it only
 * after their API key authenticated them, so a flood of strangers cannot fill it.
 */
import { apiError } from '../../domain/errors.ts';
import { deriveFunder, isVerifiedSignatureType, type VerifiedSignatureType, type WalletFactories } from '../../domain/signature-types.ts';

export type { WalletFactories };

/** A signer's wallets, lowercase: its own (EOA), its proxy wallet and its Safe, in signature-type order. */
export type SignerWallets = readonly [eoa: string, proxy: string, safe: string];

const MAX_CACHED = 16_384;

export class Funders {
  private readonly cache = new Map<string, SignerWallets>();

  constructor(readonly factories: WalletFactories) {}

  /**
   * The maker an order of `type` signed by `signer` must name: the signer itself (0), its proxy wallet (1),
   * its Safe (2). Lowercase; `signer` is a 0x address in any case.
   */
  makerOf(signer: string, type: VerifiedSignatureType): string {
    return this.walletsOf(signer)[type];
  }

  /** Every wallet whose orders `signer` signs (its own, its proxy wallet, its Safe), lowercase. */
  walletsOf(signer: string): SignerWallets {
    const eoa = signer.toLowerCase();
    let w = this.cache.get(eoa);
    if (w === undefined) {
      w = [eoa, deriveFunder(this.factories, eoa, 1), deriveFunder(this.factories, eoa, 2)];
      if (this.cache.size >= MAX_CACHED) this.cache.clear();
      this.cache.set(eoa, w);
    }
    return w;
  }

  /** The signature type whose maker `wallet` is for `signer` (0: the signer itself), undefined for none of them. */
  typeOf(signer: string, wallet: string): VerifiedSignatureType | undefined {
    const i = this.walletsOf(signer).indexOf(wallet.toLowerCase());
    return i < 0 ? undefined : (i as VerifiedSignatureType);
  }

}

/**
 * The wallet a request about the caller's money names with the platform client's `signature_type` parameter
 * (balance-allowance, notifications, rewards) or a wallet operation's `signatureType` (`field`): 0 or absent
 * the key's own wallet, 1 its proxy wallet, 2 its Safe. Any other type is a 400: none of its wallets is this
 * exchange's to name.
 */
export function walletFor(funders: Pick<Funders, 'makerOf'>, signer: string, signatureType: number | undefined, field = 'signature_type'): string {
  const type = signatureType ?? 0;
  if (!isVerifiedSignatureType(type)) throw apiError('PM_ERR_BAD_REQUEST', { detail: `${field} ${type} is not supported: 0 (EOA), 1 (POLY_PROXY) or 2 (POLY_GNOSIS_SAFE)` });
  return type === 0 ? signer : funders.makerOf(signer, type);
}
