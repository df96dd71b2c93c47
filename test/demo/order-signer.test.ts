/**
 * The demo traders' order signing (src/demo/order-signer.ts), held against viem: the order id is the
 * EIP-712 digest of the V2 Order struct under the market's domain, the signature recovers to the wallet,
 * and the submission carries the amounts of the leg.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashTypedData, recoverAddress, keccak256, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { OrderSigner } from '../../src/demo/order-signer.ts';
import { ORDER_TYPES } from '../../src/edge/auth/eip712.ts';
import { orderDomainsOf } from '../../src/edge/auth/order-check.ts';
import { testConfig } from '../../src/runtime/config.ts';

const domains = orderDomainsOf(testConfig().auth);
const privateKey = keccak256(toHex('pm-exchange order-signer test'));
const wallet = { privateKey, address: privateKeyToAccount(privateKey).address.toLowerCase(), apiKey: 'key-1' };

const cases = [
  { name: 'BUY outcome 0, GTC', negRisk: false, leg: { outcome: 0, side: 'BUY', pricePips: 4_300, sizeUnits: 20_000_000 }, orderType: 'GTC', maker: '8600000', taker: '20000000' },
  { name: 'SELL outcome 1, FAK, neg-risk domain', negRisk: true, leg: { outcome: 1, side: 'SELL', pricePips: 5_750, sizeUnits: 1_230_000 }, orderType: 'FAK', maker: '1230000', taker: '707250' },
] as const;

for (const c of cases) {
  test(`signed like a client: ${c.name}`, async () => {
    const signer = new OrderSigner(domains);
    const tokenId = '12345678901234567890123456789012345678901234567890';
    const s = signer.sign(wallet, { tokenId, negRisk: c.negRisk, leg: { ...c.leg }, orderType: c.orderType, salt: 42, timestampMs: 1_790_000_000_000 });
    const o = s.submission.order;
    assert.equal(s.submission.owner, 'key-1');
    assert.equal(s.submission.orderType, c.orderType);
    assert.equal(o.makerAmount, c.maker);
    assert.equal(o.takerAmount, c.taker);
    assert.equal(o.side, c.leg.side);
    assert.equal(o.maker, wallet.address);
    const domain = c.negRisk ? domains.negRisk : domains.normal;
    const digest = hashTypedData({
      domain: { ...domain, verifyingContract: domain.verifyingContract as Hex },
      types: ORDER_TYPES,
      primaryType: 'Order',
      message: {
        salt: 42n,
        maker: wallet.address as Hex,
        signer: wallet.address as Hex,
        tokenId: BigInt(tokenId),
        makerAmount: BigInt(c.maker),
        takerAmount: BigInt(c.taker),
        side: c.leg.side === 'BUY' ? 0 : 1,
        signatureType: 0,
        timestamp: 1_790_000_000_000n,
        metadata: `0x${'0'.repeat(64)}`,
        builder: `0x${'0'.repeat(64)}`,
      },
    });
    assert.equal(s.orderId, digest);
    assert.equal((await recoverAddress({ hash: digest, signature: o.signature as Hex })).toLowerCase(), wallet.address);
  });
}
