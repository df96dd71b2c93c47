import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getContractConfig } from '@polymarket/clob-client-v2';
import { KNOWN_AUTH_DOMAINS, KNOWN_ORDER_DOMAINS, platformOrderDomain } from '../../../src/edge/refusals/known-domains.ts';
import { loadConfig } from '../../../src/runtime/config.ts';
import { orderDomainsOf } from '../../../src/edge/auth/order-check.ts';

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

test("each profile signs for the platform's V2 exchanges of the chain known-domains names it for; the spec's profile for none", () => {
  for (const name of ['clob-v2', 'platform'] as const) {
    const c = loadConfig({ env: { PROFILE: name } });
    const d = orderDomainsOf(c.auth);
    const marked = KNOWN_ORDER_DOMAINS.filter((k) => k.profile === name);
    assert.deepEqual(
      [platformOrderDomain(d.normal), platformOrderDomain(d.negRisk)],
      [marked.find((k) => !k.negRisk), marked.find((k) => k.negRisk)],
      `PROFILE=${name} signs orders for exactly the domains marked ${name}`,
    );
    assert.deepEqual(KNOWN_AUTH_DOMAINS.filter((k) => k.profile === name).map((k) => k.domain.chainId), [c.auth.chainId], `PROFILE=${name} takes logins of the chain marked ${name}`);
  }
  assert.match(platformOrderDomain(orderDomainsOf(loadConfig({ env: { PROFILE: 'platform' } }).auth).normal)?.label ?? '', /mainnet V2 exchange/);
  // A profile's own file is that profile, as a CONFIG_FILE too.
  assert.equal(profile('platform-domains.json').auth.chainId, 137);
  assert.equal(profile('clob-v2-compat.json').auth.chainId, 80002);
  const def = orderDomainsOf(loadConfig({ env: {} }).auth);
  assert.equal(platformOrderDomain(def.normal), undefined);
  assert.equal(platformOrderDomain(def.negRisk), undefined);
  assert.ok(KNOWN_ORDER_DOMAINS.filter((k) => k.profile !== undefined).every((k) => k.struct === 'v2' && k.domain.version === '2'), 'only the V2 exchanges are a profile\'s');
});
