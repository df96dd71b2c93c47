// The package's entry for test code: `import { startExchange } from 'pm-exchange'` (docs/sandbox.md, "Drive it
// from a test suite"). The harness is TypeScript (src/harness/index.ts) run through tsx, a dependency of this
// package, registered here for the importing process unless it already runs under tsx; index.d.ts declares
// what it exports.
import { register } from 'tsx/esm/api';

const LOADED = Symbol.for('pm-exchange.tsx-registered');
if (globalThis[LOADED] !== true && !process.execArgv.some((a) => /(^|[=\s/])tsx(\/|$|\s)/.test(a))) {
  register();
  globalThis[LOADED] = true;
}
const harness = await import('./src/harness/index.ts');

export const { startExchange, AdminClient, AdminError, HOUSE_MAKER, HOUSE_TAKER, scenarioWallet } = harness;
