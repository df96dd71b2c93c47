/**
 * The signers' proxy wallets and Safes (src/edge/auth/funders.ts) with the configured factories (the platform's,
 * config/default.json): EOA -> wallet pairs the platform's own clients publish, a funder the platform refused,
 * the init-code hashes recomputed from the platform's contract libraries, and the signature_type parameter.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { concat, encodeAbiParameters, encodeFunctionData, getAddress, keccak256, type Hex } from 'viem';
import { isApiError } from '../../../src/domain/errors.ts';
import { Funders, walletFor } from '../../../src/edge/auth/funders.ts';
import { testConfig } from '../../../src/runtime/config.ts';

const factories = testConfig().auth.walletFactories;
const funders = new Funders(factories);

test('the configured factories are the platform\'s (Polymarket/proxy-factories README, builder-relayer-client, rs-clob-client)', () => {
  assert.equal(getAddress(factories.proxy.factory), '0xaB45c5A4B0c941a2F231C04C3f49182e1A254052');
  assert.equal(getAddress(factories.safe.factory), '0xaacFeEa03eb1561C4e67d661e40682Bd20E3541b');
  assert.equal(factories.proxy.initCodeHash, '0xd21df8dc65880a8606f09fe0ce3df9b8869287ab0b058be05aa9e8af6330a00b');
  assert.equal(factories.safe.initCodeHash, '0x2bce2127ff07fb632d16c8347c4ebf501f4841168bed00d9e6ef715ddb6fcecf');
});

test('published pairs: the Hardhat #0 key\'s proxy wallet and Safe (rs-clob-client tests), a Safe the relayer client derived', () => {
  // Polymarket/rs-clob-client src/lib.rs, tests derive_proxy_wallet_polygon and derive_safe_wallet_polygon/_amoy.
  const hardhat0 = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
  assert.equal(funders.makerOf(hardhat0, 1), '0x365f0ca36ae1f641e02fe3b7743673da42a13a70');
  assert.equal(funders.makerOf(hardhat0, 2), '0xd93b25cb943d14d0d34fbaf01fc93a0f8b5f6e47');
  assert.equal(funders.makerOf(hardhat0, 0), hardhat0.toLowerCase());
  // vchat-meme-blip/betmirror docs/POLYMARKET_SDK_ISSUE_REPORT.md: "SDK Derived Safe" of the signer, as
  // @polymarket/builder-relayer-client computed it.
  assert.equal(funders.makerOf('0xBBc264c10F54A61607A31B53358a5A87d4B045be', 2), '0xefae63145ffb73ab047e578324bca9baabe5e1ad');
  // Any case of the signer: the same wallets, lowercase.
  assert.deepEqual(funders.walletsOf(hardhat0.toUpperCase().replace('0X', '0x')), funders.walletsOf(hardhat0.toLowerCase()));
  assert.deepEqual(funders.walletsOf(hardhat0), [hardhat0.toLowerCase(), '0x365f0ca36ae1f641e02fe3b7743673da42a13a70', '0xd93b25cb943d14d0d34fbaf01fc93a0f8b5f6e47']);
  // Any case of the configured factories (the config's pattern takes any): upper case is no valid checksum.
  const upper = (f: { factory: string; initCodeHash: string }) => ({ ...f, factory: f.factory.toUpperCase().replace('0X', '0x') });
  const shouting = new Funders({ proxy: upper(factories.proxy), safe: upper(factories.safe) });
  assert.deepEqual(shouting.walletsOf(hardhat0), funders.walletsOf(hardhat0));
});

test('a funder the platform refused ("invalid signature" for types 1 and 2, py-clob-client #277) is neither of its signer\'s wallets', () => {
  const signer = '0xe03abC1cB9CFe66f1301A6E1d9bfa4855769266b';
  assert.equal(funders.typeOf(signer, '0x1aC3DDdfBe544e408F96e0fc9cd0c9C8e603Bd11'), undefined);
  assert.equal(funders.typeOf(signer, funders.makerOf(signer, 2).toUpperCase().replace('0X', '0x')), 2);
  assert.equal(funders.typeOf(signer, signer), 0);
});

test('the init-code hashes are what the platform\'s exchange computes (ctf-exchange PolyProxyLib and PolySafeLib)', () => {
  // PolyProxyLib._computeCreationCode(factory, implementation): a 99-byte clone creation code, then
  // abi.encodeWithSignature("cloneConstructor(bytes)", ""). The implementation is the ProxyWallet the
  // factory clones on Polygon (0x44e999d5…, as the exchange reports it).
  const factory = factories.proxy.factory.slice(2).toLowerCase();
  const implementation = '44e999d5c2f66ef0861317f9a4805ac2e90aeb4f';
  const clone = `0x3d3d606380380380913d393d73${factory}5af4602a57600080fd5b602d8060366000396000f3363d3d373d3d3d363d73${implementation}5af43d82803e903d91602b57fd5bf3` as Hex;
  assert.equal((clone.length - 2) / 2, 99);
  const cons = encodeFunctionData({ abi: [{ type: 'function', name: 'cloneConstructor', inputs: [{ type: 'bytes', name: 'b' }], outputs: [], stateMutability: 'nonpayable' }], functionName: 'cloneConstructor', args: ['0x'] });
  assert.equal(keccak256(concat([clone, cons])), factories.proxy.initCodeHash);

  // PolySafeLib.getContractBytecode(masterCopy): the Safe proxy's creation code, then abi.encode(masterCopy)
  // (the Safe singleton the factory deploys proxies of on Polygon, 0xE51abdf8…).
  const proxyCreationCode = ('0x' +
    '608060405234801561001057600080fd5b5060405161017138038061017183398101604081905261002f916100b9565b6001600160a01b0381166100945760405162461bcd60e51b8152602060' +
    '04820152602260248201527f496e76616c69642073696e676c65746f6e20616464726573732070726f766964604482015261195960f21b606482015260840160405180910390fd5b6000' +
    '80546001600160a01b0319166001600160a01b03929092169190911790556100e7565b6000602082840312156100ca578081fd5b81516001600160a01b03811681146100e0578182fd5b' +
    '9392505050565b607c806100f56000396000f3fe6080604052600080546001600160a01b0316813563530ca43760e11b1415602857808252602082f35b3682833781823684845af49050' +
    '3d82833e806041573d82fd5b503d81f3fea264697066735822122015938e3bf2c49f5df5c1b7f9569fa85cc5d6f3074bb258a2dc0c7e299bc9e33664736f6c63430008040033') as Hex;
  const masterCopy = '0xE51abdf814f8854941b9Fe8e3A4F65CAB4e7A4a8';
  assert.equal(keccak256(concat([proxyCreationCode, encodeAbiParameters([{ type: 'address' }], [masterCopy])])), factories.safe.initCodeHash);
});

test('other factories derive other wallets (configuration decides)', () => {
  const own = new Funders({ proxy: { ...factories.proxy, factory: '0x' + '11'.repeat(20) }, safe: { ...factories.safe, initCodeHash: '0x' + '22'.repeat(32) } });
  const signer = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
  assert.notEqual(own.makerOf(signer, 1), funders.makerOf(signer, 1));
  assert.notEqual(own.makerOf(signer, 2), funders.makerOf(signer, 2));
  assert.equal(own.makerOf(signer, 0), signer);
});

test('signature_type names the key\'s wallet: 0 or absent its own, 1 its proxy wallet, 2 its Safe, anything else 400', () => {
  const signer = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
  assert.equal(walletFor(funders, signer, undefined), signer);
  assert.equal(walletFor(funders, signer, 0), signer);
  assert.equal(walletFor(funders, signer, 1), '0x365f0ca36ae1f641e02fe3b7743673da42a13a70');
  assert.equal(walletFor(funders, signer, 2), '0xd93b25cb943d14d0d34fbaf01fc93a0f8b5f6e47');
  for (const t of [3, 7, 255]) {
    assert.throws(() => walletFor(funders, signer, t), (e) => isApiError(e) && e.spec.status === 400 && e.message === `signature_type ${t} is not supported: 0 (EOA), 1 (POLY_PROXY) or 2 (POLY_GNOSIS_SAFE)`);
  }
});
