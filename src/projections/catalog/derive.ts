/**
 * The catalog's derived identifiers (docs/decisions/catalog.md, "Catalog"): condition ids from question ids, token
 * ids from condition ids, neg-risk group ids from event ids; and the trading view of a market record.
 */
import { encodePacked } from 'ox/AbiParameters';
import { keccak256 } from 'ox/Hash';
import { toBigInt } from 'ox/Hex';
import { ZERO_ADDRESS } from '../../domain/ids.ts';
import { tickToPips } from '../../domain/units.ts';
import { tradable, type MarketRec, type TradingMarket } from './catalog-index.ts';

/** The oracle address in the derived condition id (no oracle contract exists here). */
export const CATALOG_ORACLE = ZERO_ADDRESS as `0x${string}`;
/** CTF's getConditionId(oracle, questionId, outcomeSlotCount = 2) with the catalog oracle. */
export function deriveConditionId(questionID: string): string {
  return keccak256(encodePacked(['address', 'bytes32', 'uint256'], [CATALOG_ORACLE, questionID as `0x${string}`, 2n]));
}

/** uint256(keccak256(abi.encodePacked(bytes32 conditionId, uint8 outcomeIndex))) in decimal. */
export function deriveTokenId(conditionId: string, outcomeIndex: 0 | 1): string {
  return toBigInt(keccak256(encodePacked(['bytes32', 'uint8'], [conditionId as `0x${string}`, outcomeIndex]))).toString();
}

/** The neg-risk group id of an event when the import names none. */
export function deriveNegRiskMarketId(eventId: string): string {
  return keccak256(encodePacked(['string', 'uint256'], ['pm-exchange/neg-risk', BigInt(eventId)]));
}

export function toTradingMarket(m: MarketRec): TradingMarket {
  return {
    conditionId: m.conditionId,
    tokenIds: [m.clobTokenIds[0], m.clobTokenIds[1]],
    tickPips: tickToPips(m.orderPriceMinTickSize),
    minSizeUnits: m.orderMinSize,
    makerFeeBps: m.makerBaseFee,
    takerFeeBps: m.takerBaseFee,
    acceptingOrders: tradable(m),
    negRisk: m.negRisk,
  };
}

/**
 * Derived token ids by condition id. keccak in JS costs ~10 us, and an import derives every new
 * market's ids twice (whole-file check, then its batch), so the writer keeps them; bounded by clearing.
 */
export class TokenMemo {
  private readonly map = new Map<string, [string, string]>();
  constructor(private readonly max = 1 << 18) {}
  get(conditionId: string): [string, string] {
    let ids = this.map.get(conditionId);
    if (!ids) {
      if (this.map.size >= this.max) this.map.clear();
      ids = [deriveTokenId(conditionId, 0), deriveTokenId(conditionId, 1)];
      this.map.set(conditionId, ids);
    }
    return ids;
  }
}
