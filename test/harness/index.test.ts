/**
 * The package's entry (index.js, typed by index.d.ts) against the harness it loads (src/harness/index.ts):
 * at typecheck, every declaration is satisfied by the implementation (the assignments below fail `npm run
 * typecheck` when index.d.ts promises what src/harness/ does not give, or takes what it does not take); at
 * run time, index.js exports exactly the harness's values, the same instances.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as declared from '../../index.js';
import * as real from '../../src/harness/index.ts';

const startExchange: typeof declared.startExchange = real.startExchange;
const client: declared.AdminClient = new real.AdminClient('http://127.0.0.1:1', 'token');
const error: declared.AdminError = new real.AdminError(400, { error: 'x' }, 'POST /admin/x');
const scenario: declared.Scenario = { market: { question: 'q' }, script: [{ at: '+5s', do: 'resolve', winner: 'yes' }] };
const asReal: real.Scenario = scenario;
const replyBack: declared.ScenarioReply = undefined as unknown as real.ScenarioReply;
const house: typeof declared.HOUSE_MAKER = real.HOUSE_MAKER;
const named: typeof declared.scenarioWallet = real.scenarioWallet;

test('index.js exports the harness\'s values, the same instances', () => {
  const keys = Object.keys(declared).sort();
  assert.deepEqual(keys, ['AdminClient', 'AdminError', 'HOUSE_MAKER', 'HOUSE_TAKER', 'scenarioWallet', 'startExchange']);
  for (const k of keys) assert.equal((declared as Record<string, unknown>)[k], (real as Record<string, unknown>)[k], k);
  assert.equal(error.status, 400);
  assert.match(error.message, /POST \/admin\/x: 400 x/);
  void [startExchange, client, asReal, replyBack, house, named];
});
