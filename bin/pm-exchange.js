#!/usr/bin/env node
// The `pm-exchange` command (package.json "bin"; src/harness/cli.ts says what it does). The service is
// TypeScript run through tsx, a dependency of this package: registered here for this process, as its worker
// threads register it for themselves (engine/thread.ts).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/harness/cli.ts');
await main(process.argv.slice(2));
