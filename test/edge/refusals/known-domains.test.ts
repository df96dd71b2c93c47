import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { getContractConfig } from '@polymarket/clob-client-v2';
import { KNOWN_AUTH_DOMAINS, KNOWN_ORDER_DOMAINS, platformOrderDomain } from '../../../src/edge/refusals/known-domains.ts';
import { loadConfig } from '../../../src/runtime/config.ts';
import { orderDomainsOf } from '../../../src/edge/order-check.ts';

const profile = (file: string) => loadConfig({ env: { CONFIG_FILE: `config/${file}` } });

test("the known domains are the platform client's own contracts, for both of its chains", () => {
  for (const chainId of [137, 80002]) {
    const c = getContractConfig(chainId) as unknown as Record<string, string>;
    const at = (v: string, negRisk: boolean) => KNOWN_ORDER_DOMAINS.find((k) => k.domain.chainId === chainId && k.domain.version === v && k.negRisk === negRisk)!.domain.verifyingContract;
    assert.equal(at('2', false), c.exchangeV2);
    assert.equal(at('2', true), c.negRiskExchangeV2);
    assert.equal(at('3', false), c.exchangeV3);
    assert.equal(at('1', false), c.exchange);
    assert.equal(at('1', true), c.negRiskExchange);
  }
  assert.deepEqual(KNOWN_AUTH_DOMAINS.map((d) => d.domain.chainId), [137, 80002]);
});

test("config/platform-domains.json signs for the platform's mainnet V2 exchanges; the default configuration for none", () => {
  const d = orderDomainsOf(profile('platform-domains.json').auth);
  assert.equal(d.normal.chainId, 137);
  assert.match(platformOrderDomain(d.normal)?.label ?? '', /mainnet V2 exchange/);
  assert.match(platformOrderDomain(d.negRisk)?.label ?? '', /mainnet V2 neg-risk exchange/);
  const def = orderDomainsOf(loadConfig({ env: {} }).auth);
  assert.equal(platformOrderDomain(def.normal), undefined);
  assert.equal(platformOrderDomain(def.negRisk), undefined);
  // The file is what README quotes: nothing but the domains.
  assert.deepEqual(Object.keys(JSON.parse(readFileSync('config/platform-domains.json', 'utf8'))), ['auth']);
});
