import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { EDGE_ROOMS, ENGINE_ROOMS, KNOWN_CYCLES, KNOWN_VIOLATIONS, RULES, check, findCycles, importsOf, type Violation } from '../../tools/check-imports.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Writes `files` (paths relative to a fresh src dir) and returns that dir. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'pm-imports-'));
  dirs.push(root);
  const src = join(root, 'src');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(src, path)), { recursive: true });
    writeFileSync(join(src, path), text);
  }
  return src;
}

type Known = NonNullable<Parameters<typeof check>[1]>;
const none: Known = { cycles: [], violations: [] };
const found = (files: Record<string, string>, known: Known = none) => check(tree(files), known);
const rulesOf = (files: Record<string, string>) => found(files).map((v) => v.rule).sort();
const show = (vs: Violation[]) => vs.map((v) => `${v.file} -> ${v.target}: ${v.rule}`).join('\n');

test('src/ follows the import rules', () => {
  const got = check();
  assert.deepEqual(got, [], show(got));
});

test('every allowlisted cycle and violation still exists, so the allowlists only shrink', () => {
  const cycles = findCycles();
  for (const known of KNOWN_CYCLES) {
    assert.ok(
      cycles.some((c) => c.length === known.length && c.every((f, i) => f === known[i])),
      `KNOWN_CYCLES names ${known.join(', ')}, which is no longer a cycle of src/: remove it`,
    );
  }
  const all = check(undefined, none);
  for (const known of KNOWN_VIOLATIONS) {
    assert.ok(
      all.some((v) => v.file === known.file && v.target === known.target && v.rule === known.rule),
      `KNOWN_VIOLATIONS names ${known.file} -> ${known.target} (${known.rule}), which no longer occurs: remove it`,
    );
  }
});

describe('each layer rule fails a tree that breaks it', () => {
  const cases: [string, Record<string, string>][] = [
    [RULES.outside, { 'app.ts': "import { loadDemo } from '../tools/demo-catalog.ts';\n" }],
    [RULES.domain, { 'domain/a.ts': "import type { Store } from '../journal/env.ts';\n" }],
    [RULES.runtime, { 'runtime/config.ts': "import { DEFAULT_BUCKETS } from '../edge/rate-limit-buckets.ts';\n" }],
    [RULES.runtime, { 'runtime/log.ts': "import type { Store } from '../journal/env.ts';\n" }],
    [RULES.book, { 'engine/book/b.ts': "import { y } from '../../journal/env.ts';\n" }],
    [RULES.engineEdge, { 'engine/x.ts': "import type { AppContext } from '../edge/context.ts';\n" }],
    [RULES.edgeEngine, { 'edge/d.ts': "import { Ring } from '../engine/ring.ts';\n" }],
    [RULES.edgeStorage, { 'edge/d.ts': "import { w } from '../journal/writer.ts';\n" }],
    [RULES.queriesEngine, { 'queries/c.ts': "import type { Worker } from '../engine/worker.ts';\n" }],
    [RULES.queriesEdge, { 'queries/c.ts': "import { BookSummary } from '../edge/schemas/market-data.ts';\n" }],
    [RULES.queriesEdge, { 'queries/c.ts': "import type { AppContext } from '../edge/context.ts';\n" }],
    [RULES.projectionsQueries, { 'projections/p.ts': "import type { CatalogReader } from '../queries/catalog.ts';\n" }],
    [RULES.projectionsEdge, { 'projections/p.ts': "export { apiError } from '../edge/error-reply.ts';\n" }],
    [RULES.projectionsEdge, { 'projections/p.ts': "import { EventInput } from '../edge/schemas/admin.ts';\n" }],
    [RULES.uws, { 'journal/e.ts': "import type { HttpResponse } from 'uWebSockets.js';\n" }],
    [RULES.lmdb, { 'queries/c.ts': "import { open } from 'lmdb';\n" }],
    [RULES.replication, { 'replication/f.ts': "import type { Metrics } from '../edge/metrics.ts';\n" }],
    [RULES.replication, { 'replication/f.ts': "import { Projector } from '../projections/projector.ts';\n" }],
    [RULES.nats, { 'edge/n.ts': "import { connect } from '@nats-io/transport-node';\n" }],
    [RULES.nodeImporters, { 'edge/routes/admin.ts': "import type { App } from '../../node/app.ts';\n" }],
    [RULES.nodeImporters, { 'demo/live.ts': "import { startApp } from '../node/app.ts';\n" }],
    [RULES.nodeImporters, { 'queries/q.ts': "import type { RoleParts } from '../node/roles.ts';\n" }],
    [RULES.nodeHarness, { 'node/app.ts': "import { startExchange } from '../harness/start.ts';\n" }],
    [RULES.edgeRooms, { 'edge/http/http.ts': "import type { RouteDef } from '../pipeline/route.ts';\n" }],
    [RULES.edgeRooms, { 'edge/http/uws.ts': "import type { AppContext } from '../context.ts';\n" }],
    [RULES.edgeRooms, { 'edge/auth/auth.ts': "import { authRoutes } from '../routes/auth.ts';\n" }],
    [RULES.edgeRooms, { 'edge/pipeline/pipeline.ts': "import type { AuthService } from '../auth/auth.ts';\n" }],
    [RULES.edgeRooms, { 'edge/pipeline/pipeline.ts': "import { forward } from '../cluster/forward.ts';\n" }],
    [RULES.edgeRooms, { 'edge/limits/rate-limit.ts': "import type { Metrics } from '../pipeline/metrics.ts';\n" }],
    [RULES.edgeRooms, { 'edge/schemas/orders.ts': "import type { Funders } from '../auth/funders.ts';\n" }],
    [RULES.edgeRooms, { 'edge/ws/channels.ts': "import { tradingRoutes } from '../routes/trading.ts';\n" }],
    [RULES.edgeRooms, { 'edge/routes/trading.ts': "import { RateLimiter } from '../limits/rate-limit.ts';\n" }],
    [RULES.edgeRooms, { 'edge/trading/heartbeats.ts': "import { apiError } from '../pipeline/error-reply.ts';\n" }],
    [RULES.edgeRoomUnknown, { 'edge/misc/helpers.ts': 'export const x = 1;\n' }],
    [RULES.routeGroups, { 'edge/routes/clob/trading.ts': "import { walletForm } from '../data/wallets.ts';\n" }],
    [RULES.routeGroups, { 'edge/routes/admin.ts': "import { marketForm } from './catalog/catalog.ts';\n" }],
    [RULES.routeGroups, { 'edge/routes/catalog/catalog.ts': "import { balancesOf } from '../admin.ts';\n" }],
    [RULES.engineRooms, { 'engine/orders/admission.ts': "import type { Engine } from '../engine.ts';\n" }],
    [RULES.engineRooms, { 'engine/ledger/settlement.ts': "import { runStartup } from '../startup.ts';\n" }],
    [RULES.engineRooms, { 'engine/shard/worker.ts': "import { Ledger } from '../ledger/ledger.ts';\n" }],
    [RULES.engineRooms, { 'engine/shard/shard-link.ts': "import { admit } from '../orders/admission.ts';\n" }],
    [RULES.engineRooms, { 'engine/markets/market-admin.ts': "import { OrderTable } from '../orders/order-table.ts';\n" }],
    [RULES.engineRoomUnknown, { 'engine/misc/helpers.ts': 'export const x = 1;\n' }],
    [RULES.edgeUws, { 'edge/routes/ops.ts': "import type { HttpResponse } from 'uWebSockets.js';\n" }],
    [RULES.edgeUws, { 'edge/auth/auth.ts': "import type { HttpRequest } from 'uWebSockets.js';\n" }],
  ];
  for (const [rule, files] of cases) {
    test(`${rule}: ${Object.values(files)[0].trim()}`, () => {
      assert.deepEqual(rulesOf(files), [rule]);
    });
  }
});

test('what the rules allow passes', () => {
  const got = found({
    'domain/units.ts': "export const UNITS = 1_000_000;\n",
    'domain/ids.ts': "import { UNITS } from './units.ts';\nexport const x = UNITS;\n",
    'runtime/clock.ts': "import { UNITS } from '../domain/units.ts';\nimport { pino } from 'pino';\n",
    'engine/book/api.ts': "import type { x } from '../../domain/ids.ts';\n",
    'engine/engine.ts': "import type { Store } from '../journal/env.ts';\nimport './book/api.ts';\n",
    'edge/context.ts': "import type { Engine } from '../engine/engine.ts';\nimport type { Store } from '../journal/env.ts';\nimport { App } from 'uWebSockets.js';\n",
    'edge/schemas/market-data.ts': "export const BookSummary = {};\n",
    'edge/schemas/admin.ts': "export const EventInput = {};\n",
    'journal/env.ts': "import { open } from 'lmdb';\n",
    'queries/m.ts': "import type { BookSummary } from '../edge/schemas/market-data.ts';\nimport { type X } from '../engine/book/api.ts';\n",
    'projections/c.ts': "import { type EventInput } from '../edge/schemas/admin.ts';\nimport type { Store } from '../journal/env.ts';\n",
    'demo/catalog.ts': "import type { EngineAdmin } from '../edge/context.ts';\nexport { UNITS } from '../domain/units.ts';\n",
    'replication/r.ts': "import type { Engine } from '../engine/engine.ts';\nimport type { Store } from '../journal/env.ts';\nimport { jetstream } from '@nats-io/jetstream';\n",
    'node/app.ts': "import { Engine } from '../engine/engine.ts';\nimport { serve } from '../edge/context.ts';\nimport { r } from '../replication/r.ts';\nimport type { RoleParts } from './roles.ts';\n",
    'node/roles.ts': "export type RoleParts = { cluster?: typeof import('./cluster.ts') };\n",
    'node/cluster.ts': "import { Store } from '../journal/env.ts';\n",
    'main.ts': "import { startApp } from './node/app.ts';\nawait import('./node/cluster.ts');\n",
    'harness/start.ts': "import { startApp, type App } from '../node/app.ts';\n",
  });
  assert.deepEqual(got, [], show(got));
});

test('the rooms of edge/ pass in their allowed directions, and the root composes any of them', () => {
  const got = found({
    'edge/server.ts': "import { serve } from './http/http.ts';\nimport { Pipeline } from './pipeline/pipeline.ts';\nimport { App } from 'uWebSockets.js';\n",
    'edge/routes.ts': "import { tradingRoutes } from './routes/clob/trading.ts';\nimport { adminRoutes } from './routes/admin.ts';\n",
    'edge/routes/admin.ts': "import type { AppContext } from '../context.ts';\n",
    'edge/routes/test-controls.ts': "import { balancesOf } from './admin.ts';\n",
    'edge/routes/clob/auth.ts': "export const authRoutes = 1;\n",
    'edge/routes/clob/account.ts': "import { authRoutes } from './auth.ts';\n",
    'edge/context.ts': "import type { AuthService } from './auth/auth.ts';\nimport type { Heartbeats } from './trading/heartbeats.ts';\n",
    'edge/http/http.ts': "import { DepthScan } from './json-body.ts';\nimport type { Refusal } from '../refusals/reason.ts';\nimport type { HttpResponse } from 'uWebSockets.js';\n",
    'edge/http/json-body.ts': 'export const MAX_JSON_DEPTH = 32;\n',
    'edge/refusals/reason.ts': 'export type Refusal = string;\n',
    'edge/pipeline/pipeline.ts': "import type { Incoming } from '../http/http.ts';\nimport { replicaServes } from '../cluster/replica-routes.ts';\nimport { bucketsFor } from '../limits/rate-limit-buckets.ts';\n",
    'edge/cluster/replica-routes.ts': "export const replicaServes = 1;\n",
    'edge/limits/rate-limit-buckets.ts': "import { DEFAULT_BUCKETS } from '../../domain/rate-limits.ts';\n",
    'edge/auth/auth.ts': "import type { Authenticator } from '../pipeline/pipeline.ts';\nimport { explain } from '../refusals/reason.ts';\n",
    'edge/ws/channels.ts': "import { AuthService } from '../auth/auth.ts';\nimport { App } from 'uWebSockets.js';\n",
    'edge/routes/trading.ts': "import type { AppContext } from '../context.ts';\nimport { checkOrders } from '../auth/auth.ts';\nimport { Heartbeats } from '../trading/heartbeats.ts';\n",
    'edge/trading/heartbeats.ts': "import type { Engine } from '../../engine/engine.ts';\n",
    'domain/rate-limits.ts': 'export const DEFAULT_BUCKETS = {};\n',
    'engine/engine.ts': 'export class Engine {}\n',
  });
  assert.deepEqual(got, [], show(got));
});

test('the rooms of engine/ pass in their allowed directions, and the root composes any of them', () => {
  const got = found({
    'engine/engine.ts': "import { Ledger } from './ledger/ledger.ts';\nimport { admit } from './orders/admission.ts';\nimport { ShardLink } from './shard/shard-link.ts';\n",
    'engine/engine-types.ts': 'export type EngineOptions = {};\n',
    'engine/lifecycle.ts': 'export const open = 1;\n',
    'engine/book/api.ts': 'export const Side = {};\n',
    'engine/shard/shard-link.ts': "import { Side } from '../book/api.ts';\nimport type { OrderState } from '../orders/order-table.ts';\nimport { open } from '../lifecycle.ts';\n",
    'engine/orders/order-table.ts': "import type { EngineOptions } from '../engine-types.ts';\n",
    'engine/orders/admission.ts': "import { Ledger } from '../ledger/ledger.ts';\nimport type { ShardLink } from '../shard/shard-link.ts';\nimport { OrderTable } from './order-table.ts';\n",
    'engine/ledger/ledger.ts': "import { Side } from '../book/api.ts';\nimport type { OrderState } from '../orders/order-table.ts';\n",
  });
  assert.deepEqual(got, [], show(got));
});

test('ENGINE_ROOMS names exactly the folders of src/engine, and each room it allows exists', () => {
  const engine = join(dirname(new URL(import.meta.url).pathname), '../../src/engine');
  const folders = readdirSync(engine).filter((n) => statSync(join(engine, n)).isDirectory()).sort();
  assert.deepEqual(Object.keys(ENGINE_ROOMS).sort(), folders);
  for (const [room, allowed] of Object.entries(ENGINE_ROOMS)) {
    for (const a of allowed) {
      assert.ok(folders.includes(a) || statSync(join(engine, a), { throwIfNoEntry: false })?.isFile(), `ENGINE_ROOMS.${room} allows ${a}, which is not in src/engine`);
    }
  }
});

test('EDGE_ROOMS names exactly the folders of src/edge, and each room it allows exists', () => {
  const edge = join(dirname(new URL(import.meta.url).pathname), '../../src/edge');
  const folders = readdirSync(edge).filter((n) => statSync(join(edge, n)).isDirectory()).sort();
  assert.deepEqual(Object.keys(EDGE_ROOMS).sort(), folders);
  for (const [room, allowed] of Object.entries(EDGE_ROOMS)) {
    for (const a of allowed) {
      assert.ok(a === '.' || folders.includes(a) || statSync(join(edge, a), { throwIfNoEntry: false })?.isFile(), `EDGE_ROOMS.${room} allows ${a}, which is not in src/edge`);
    }
  }
});

describe('the cycle rule', () => {
  test('a value cycle between two files fails, reported as the loop', () => {
    const got = found({ 'edge/a.ts': "import { b } from './b.ts';\nexport const a = 1;\n", 'edge/b.ts': "import { a } from './a.ts';\nexport const b = 2;\n" });
    assert.deepEqual(got, [{ file: 'edge/a.ts', target: 'edge/a.ts -> edge/b.ts -> edge/a.ts', rule: RULES.cycle }]);
  });

  test('type-only imports close a cycle too', () => {
    const got = found({
      'engine/book/book.ts': "import type { Match } from './match.ts';\nexport interface Book { m: Match }\n",
      'engine/book/match.ts': "import { type Book } from './book.ts';\nexport interface Match { b: Book }\n",
    });
    assert.deepEqual(got.map((v) => v.rule), [RULES.cycle]);
  });

  test('a longer cycle through a re-export, a dynamic import and a worker entry fails once', () => {
    const got = found({
      'engine/a.ts': "export { b } from './b.ts';\n",
      'engine/b.ts': "export const b = () => import('./c.ts');\n",
      'engine/c.ts': "export const url = new URL('./d.ts', import.meta.url);\n",
      'engine/d.ts': "export type * from './a.ts';\n",
      'engine/e.ts': "import { b } from './a.ts';\n",
    });
    assert.deepEqual(got, [{ file: 'engine/a.ts', target: 'engine/a.ts -> engine/b.ts -> engine/c.ts -> engine/d.ts -> engine/a.ts', rule: RULES.cycle }]);
  });

  test('a file importing itself is a cycle; a diamond is not', () => {
    assert.deepEqual(rulesOf({ 'edge/a.ts': "import type { A } from './a.ts';\n" }), [RULES.cycle]);
    assert.deepEqual(
      rulesOf({
        'edge/a.ts': "import './b.ts';\nimport './c.ts';\n",
        'edge/b.ts': "import './d.ts';\n",
        'edge/c.ts': "import './d.ts';\n",
        'edge/d.ts': 'export {};\n',
      }),
      [],
    );
  });

  test('a worker entry written as .mjs with a query string is followed', () => {
    const got = found({
      'edge/pool.ts': "export const f = new URL('./entry.mjs', import.meta.url).href;\n",
      'edge/entry.mjs': "const mod = await import('./worker.ts?tsx');\n",
      'edge/worker.ts': "import { f } from './pool.ts';\n",
    });
    assert.deepEqual(got.map((v) => v.rule), [RULES.cycle]);
  });

  test('an allowlisted cycle passes only while it keeps exactly its files', () => {
    const files = {
      'engine/book/book.ts': "import type { Match } from './match.ts';\n",
      'engine/book/match.ts': "import type { Book } from './book.ts';\n",
    };
    const known: Known = { cycles: [['engine/book/book.ts', 'engine/book/match.ts']], violations: [] };
    assert.deepEqual(found(files, known), []);
    const grown = found({ ...files, 'engine/book/api.ts': "import type { Book } from './book.ts';\n", 'engine/book/match.ts': "import type { Book } from './book.ts';\nimport './api.ts';\n" }, known);
    assert.deepEqual(grown.map((v) => v.rule), [RULES.cycle]);
  });
});

describe('importsOf reads what a file imports', () => {
  const refs = (text: string) => importsOf(text).map((r) => `${r.kind} ${r.typeOnly ? 'type' : 'value'} ${r.spec}`);

  test('static imports and re-exports, type-only or not', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type { B } from './b.ts';",
      "import { type C, type D } from './c.ts';",
      "import { type E, e } from './e.ts';",
      "import F, { type G } from './f.ts';",
      "import type H from './h.ts';",
      "import * as I from './i.ts';",
      "import type * as J from './j.ts';",
      "import {",
      '  type K,',
      '  type L,',
      "} from './k.ts';",
      "export { m } from './m.ts';",
      "export type { N } from './n.ts';",
      "export * from './o.ts';",
      "export type * from './p.ts';",
      "import './q.ts';",
      "import type from './r.ts';",
    ].join('\n');
    assert.deepEqual(refs(text), [
      'static value ./a.ts',
      'static type ./b.ts',
      'static type ./c.ts',
      'static value ./e.ts',
      'static value ./f.ts',
      'static type ./h.ts',
      'static value ./i.ts',
      'static type ./j.ts',
      'static type ./k.ts',
      'static value ./m.ts',
      'static type ./n.ts',
      'static value ./o.ts',
      'static type ./p.ts',
      'static value ./r.ts',
      'static value ./q.ts',
    ]);
  });

  test('dynamic imports and worker entries; type positions of import() are type-only', () => {
    const text = [
      "const m = await import('./a.ts');",
      "import('./b.ts').then((x) => x);",
      "type C = typeof import('./c.ts');",
      "let d: import('./d.ts').D;",
      "new Worker(new URL('./e.ts', import.meta.url));",
      "const f = new URL('../f.mjs', import.meta.url).href;",
      "const notAWorker = new URL('./g.ts', base);",
    ].join('\n');
    assert.deepEqual(refs(text), ['dynamic value ./a.ts', 'dynamic value ./b.ts', 'dynamic type ./c.ts', 'dynamic type ./d.ts', 'worker value ./e.ts', 'worker value ../f.mjs']);
  });

  test('comments, template literals and regular expressions hold no imports', () => {
    const text = [
      '/**',
      " * import { a } from './a.ts';",
      " * await import('./b.ts')",
      ' */',
      "// import { c } from './c.ts';",
      "const url = 'http://host/x'; import { d } from './d.ts';",
      "const code = `import { e } from './e.ts'; await import('./f.ts') ${`nested import('./g.ts')`}`;",
      "const re = /['\"]\\/\\//; const s = \"it's\"; const h = await import('./h.ts');",
      "const ratio = a / b; const i = await import('./i.ts'); const j = c / d;",
    ].join('\n');
    assert.deepEqual(refs(text), ['static value ./d.ts', 'dynamic value ./h.ts', 'dynamic value ./i.ts']);
  });
});
