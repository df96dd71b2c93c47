/**
 * The platform's own signing domains, as its clients hard-code them (`@polymarket/clob-client-v2`
 * `dist/config.js` and `order-utils/model/ctfExchange*TypedData.js`). A diagnosis tries them when an order or
 * an L1 header does not verify under this exchange's configured domains (the most common mistake: an SDK
 * that signs for the platform's mainnet whatever it is pointed at, or a client that knows only the
 * platform's chains), and names the profile that would take it (`PROFILE=clob-v2` signs for the test chain's
 * V2 exchanges, `PROFILE=platform` for the mainnet's); the start-up log warns when the configuration uses one
 * of the real exchanges (orders signed for it are valid on the platform). The profiles' files are
 * config/clob-v2-compat.json and config/platform-domains.json; test/edge/refusals/known-domains.test.ts keeps
 * them and the `profile` of each entry here in step.
 */
import type { AuthDomain, OrderDomain } from '../auth/eip712.ts';

/** The configuration profile (runtime/config-schema.ts PROFILES) whose domains are a chain's. */
export type DomainProfile = 'clob-v2' | 'platform';

/** The platform's chains: Polygon mainnet and the Amoy test chain, and the profile that signs for each. */
export const PLATFORM_CHAINS = [
  { chainId: 137, name: "the platform's mainnet (Polygon, chain 137)", profile: 'platform' },
  { chainId: 80002, name: "the platform's test chain (Amoy, chain 80002)", profile: 'clob-v2' },
] as const satisfies ReadonlyArray<{ chainId: number; name: string; profile: DomainProfile }>;

/** The order struct a domain's exchange verifies: V2 (timestamp, metadata, builder) or the older V1 (taker, expiration, nonce, feeRateBps). */
export type OrderStructVersion = 'v1' | 'v2';

export interface KnownOrderDomain {
  readonly domain: OrderDomain;
  readonly struct: OrderStructVersion;
  /** Whether the contract is the neg-risk markets' exchange. */
  readonly negRisk: boolean;
  /** How a reason names it, e.g. "the platform's mainnet V2 neg-risk exchange". */
  readonly label: string;
  /** The profile whose order domains it is (the V2 exchanges of each chain), if any. */
  readonly profile?: DomainProfile;
}

const NAME = 'Polymarket CTF Exchange';

/** Each chain's exchange contracts, by the client's names. */
const CONTRACTS = {
  137: {
    exchange: '0x4bFb41d5B3570DeFd03C39a9A4D8dE6Bd8B8982E',
    negRiskExchange: '0xC5d563A36AE78145C45a50134d48A1215220f80a',
    exchangeV2: '0xE111180000d2663C0091e4f400237545B87B996B',
    negRiskExchangeV2: '0xe2222d279d744050d28e00520010520000310F59',
    exchangeV3: '0xe3333700cA9d93003F00f0F71f8515005F6c00Aa',
  },
  80002: {
    exchange: '0xdFE02Eb6733538f8Ea35D585af8DE5958AD99E40',
    negRiskExchange: '0xC5d563A36AE78145C45a50134d48A1215220f80a',
    exchangeV2: '0xE111180000d2663C0091e4f400237545B87B996B',
    negRiskExchangeV2: '0xe2222d279d744050d28e00520010520000310F59',
    exchangeV3: '0x9fE6e61422AdB6F610d8597F9684b16912D50C3D',
  },
} as const;

function chainLabel(chainId: 137 | 80002): string {
  return chainId === 137 ? "the platform's mainnet" : "the platform's Amoy test chain";
}

/** Every order domain the platform's clients sign for, V2 first (what current clients send). */
export const KNOWN_ORDER_DOMAINS: readonly KnownOrderDomain[] = ([137, 80002] as const).flatMap((chainId) => {
  const c = CONTRACTS[chainId];
  const at = chainLabel(chainId);
  const d = (version: string, verifyingContract: string): OrderDomain => ({ name: NAME, version, chainId, verifyingContract });
  const profile = PLATFORM_CHAINS.find((p) => p.chainId === chainId)!.profile;
  return [
    { domain: d('2', c.exchangeV2), struct: 'v2', negRisk: false, label: `${at} V2 exchange`, profile },
    { domain: d('2', c.negRiskExchangeV2), struct: 'v2', negRisk: true, label: `${at} V2 neg-risk exchange`, profile },
    { domain: d('3', c.exchangeV3), struct: 'v2', negRisk: false, label: `${at} V3 exchange` },
    { domain: d('1', c.exchange), struct: 'v1', negRisk: false, label: `${at} V1 exchange (the older order struct)` },
    { domain: d('1', c.negRiskExchange), struct: 'v1', negRisk: true, label: `${at} V1 neg-risk exchange (the older order struct)` },
  ];
});

/** The L1 (ClobAuth) domains of the platform's chains, and the profile that takes each. */
export const KNOWN_AUTH_DOMAINS: ReadonlyArray<{ readonly domain: AuthDomain; readonly label: string; readonly profile: DomainProfile }> = PLATFORM_CHAINS.map((c) => ({
  domain: { name: 'ClobAuthDomain', version: '1', chainId: c.chainId },
  label: c.name,
  profile: c.profile,
}));

/** What a reason adds for a domain a profile takes: how to start the exchange so that it is accepted. */
export function profileAdvice(profile: DomainProfile | undefined): string {
  return profile === undefined ? '' : `, or start this exchange with PROFILE=${profile}, which takes it`;
}

/** The known domain a configured order domain is, if any (the start-up warning: orders valid on the platform). */
export function platformOrderDomain(d: OrderDomain): KnownOrderDomain | undefined {
  return KNOWN_ORDER_DOMAINS.find(
    (k) => k.domain.chainId === d.chainId && k.domain.name === d.name && k.domain.version === d.version && k.domain.verifyingContract.toLowerCase() === d.verifyingContract.toLowerCase(),
  );
}
