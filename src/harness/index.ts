/**
 * The package's entry for test code (`import { startExchange } from 'pm-exchange'`; index.js at the
 * package's root loads it through tsx): the harness and its admin client. docs/sandbox.md, "Drive it from a
 * test suite", documents it; index.d.ts declares it for TypeScript consumers (test/harness/index.test.ts holds
 * the two together).
 */
export { startExchange, type Exchange, type ExchangeOptions, type TestWallet } from './start.ts';
export { AdminClient, AdminError, type AdminOrder, type Advanced, type BookSet, type CreatedMarket, type Filled } from './admin-client.ts';
export type { AdminCancelBody, AdminOrderBody, ClockState, Scenario, ScenarioReply, SetBookBody, WalletBalances } from './admin-client.ts';
export { HOUSE_MAKER, HOUSE_TAKER } from '../edge/sandbox/counterparties.ts';
export { scenarioWallet } from '../edge/sandbox/scenario.ts';
