/**
 * Enforces the import rules of the layered layout (STYLE.md): who may import whom inside src/, which
 * files may import uWebSockets.js and lmdb, and that src/ has no import cycles. Prints every violation
 * and exits 1 when any exist. Run by test/tools/check-imports.test.ts, so CI fails on a violation.
 *
 *   src/           imports nothing outside src/ (no tools/, test/ or bench/)
 *   domain/        imports nothing else from src/
 *   runtime/       imports only domain/
 *   engine/book/   imports only domain/ (and itself)
 *   engine/        never edge/
 *   engine/ rooms  each folder of engine/ imports only what ENGINE_ROOMS lists for it (below: book/ under
 *                  everything, then shard/, markets/, orders/ and ledger/ with the root's shared types and
 *                  group commit); only the root's files (the facade, start-up, checkpoints, audit) compose the
 *                  rooms, so no room reaches the facade; engine/ has no folder ENGINE_ROOMS does not name
 *   edge/          reaches the engine only through engine/engine.ts (the facade), engine/book/api.ts
 *                  and engine/shard-router.ts, and storage only through queries/ (plus journal/env.ts
 *                  and journal/keys.ts)
 *   edge/ rooms    each folder of edge/ imports only the rooms EDGE_ROOMS lists for it (below: the
 *                  direction of the edge, transport -> pipeline -> auth -> API), and edge/ has no folder
 *                  EDGE_ROOMS does not name; the files at edge/'s root (server.ts, routes.ts, context.ts)
 *                  compose the rooms and may import any of them
 *   route groups   routes/ holds the interface's sections as sub-rooms (clob/, data/, catalog/) and the
 *                  service's own routes at its root; no group imports another (edge/routes.ts binds them)
 *   queries/       never engine/ internals; of edge/ only the wire types of edge/schemas/, as types
 *   projections/   never queries/; of edge/ only the wire types of edge/schemas/, as types
 *   replication/   imports only domain/, runtime/, journal/ and engine/engine.ts (the facade): the stream
 *                  below the read side, which node/ wires to it
 *   node/          a node's life (composition root, roles, failover) assembles every layer, so it may import
 *                  any of src/ but harness/; only main.ts (the process) and harness/ (a node for test code)
 *                  import it: nothing the node assembles knows how it is assembled
 *   uWebSockets.js only in edge/, and there only in http/, ws/ and its root files; lmdb only in journal/; the
 *                  NATS clients (@nats-io/*) only in replication/
 *   no cycles      between files of src/, type-only imports included
 *
 * Every rule counts type-only imports (`import type`, `export type ... from`, `{ type A }`,
 * `typeof import()`): a type couples two modules as much as a value does when either changes. The
 * exceptions are spelled out above: the schemas' wire types may be imported as types by the read
 * and write sides. An import is what a file names in a static `import`/`export ... from`, a dynamic
 * `import()` or a worker entry `new URL('./x.ts', import.meta.url)`; comments and template literals are
 * not read.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

export const RULES = {
  outside: 'src/ imports nothing outside src/ (no tools/, test/ or bench/)',
  domain: 'domain/ imports nothing else from src/',
  runtime: 'runtime/ imports only domain/',
  book: 'engine/book/ imports only domain/',
  engineEdge: 'engine/ never imports edge/',
  edgeEngine: 'edge/ reaches the engine only through engine/engine.ts',
  edgeStorage: 'edge/ reads storage through queries/',
  queriesEngine: 'queries/ never imports engine/ internals',
  queriesEdge: 'queries/ imports only edge/schemas/ of edge/, for types only',
  projectionsQueries: 'projections/ never imports queries/',
  projectionsEdge: 'projections/ imports only edge/schemas/ of edge/, for types only',
  uws: 'only edge/ imports uWebSockets.js',
  lmdb: 'only journal/ imports lmdb',
  replication: 'replication/ imports only domain/, runtime/, journal/ and engine/engine.ts',
  nats: 'only replication/ imports the NATS clients',
  nodeImporters: 'only main.ts and harness/ import node/',
  nodeHarness: 'node/ never imports harness/',
  cycle: 'no import cycles in src/, type-only imports included',
  edgeRooms: 'a room of edge/ imports only the rooms EDGE_ROOMS allows it',
  edgeRoomUnknown: 'every folder of edge/ is a room named in EDGE_ROOMS',
  edgeUws: 'of edge/, only http/, ws/ and its root files import uWebSockets.js',
  routeGroups: 'a route group of edge/routes/ imports no other group',
  engineRooms: 'a room of engine/ imports only what ENGINE_ROOMS allows it',
  engineRoomUnknown: 'every folder of engine/ is a room named in ENGINE_ROOMS',
} as const;

/**
 * The rooms of edge/ and, for each, what else of edge/ it may import: a room (its folder's name), `.` for
 * the files at edge/'s root, or one file (`refusals/reason.ts`). A room's own files may always import each
 * other. Nothing but edge/'s root imports routes/: the API is the top of the edge, and nothing below it
 * knows which endpoints exist. Each room's main file opens with what it owns and why it is a room.
 */
export const EDGE_ROOMS: Readonly<Record<string, readonly string[]>> = {
  // The uWS loader and the request lifecycle: bytes in, a Reply out. Knows no route, stage or credential;
  // only the refusal header's type, which a Reply carries.
  http: ['refusals/reason.ts'],
  // Pure counters over caller keys: no request, no route.
  limits: [],
  // The wire types (TypeBox): the read side imports them too, so they stay below everything that serves.
  schemas: ['refusals/reason.ts'],
  // The stages every request passes (head, gate, sign, caps, body, schema, replay, handler). Runs the
  // Authenticator it is given (auth/ implements pipeline's interface, never the reverse) and asks cluster/
  // only which routes a replica serves.
  pipeline: ['http', 'limits', 'refusals', 'cluster/replica-routes.ts'],
  // Why a request was refused: diagnoses replayed after the decision, with auth's digests and the route's
  // key kinds.
  refusals: ['auth', 'schemas', 'pipeline/route.ts'],
  // Keys, signatures, the signature pool, funders and the order checks: implement pipeline's interfaces.
  auth: ['pipeline', 'refusals', 'schemas'],
  // Gateway forwarding and replica routes: run requests through the pipeline on the sequencer's behalf.
  cluster: ['http', 'pipeline', 'refusals'],
  // Trading features with state of their own behind a route (heartbeats): engine and store, no edge.
  trading: [],
  // The sandbox's gates and faults (maintenance, injected faults, test controls, counterparties).
  sandbox: ['auth', 'pipeline', 'schemas', 'ws/socket-faults.ts'],
  // The WebSocket channels: their own lifecycle beside http/, the same credentials and caps.
  ws: ['auth', 'limits', 'pipeline', 'refusals', 'schemas'],
  // The API: one module per route group, handlers over the context (edge/context.ts). The top of the edge.
  routes: ['.', 'auth', 'http/static-files.ts', 'pipeline', 'refusals', 'sandbox', 'schemas', 'trading'],
};

/**
 * The rooms of engine/ and, for each, what else of engine/ it may import: a room (its folder's name) or one
 * file (`orders/order-table.ts`, a root file such as `lifecycle.ts`). A room's own files may always import
 * each other. The root's files (engine.ts, the facade, and the start-up, checkpointer and audit it wires)
 * may import any room; no room imports them back, except the small shared parts named here. Where two rooms
 * name each other's single file, it is for the type of the table they share (an order's market, a market's
 * fee schedule), not for behaviour.
 */
export const ENGINE_ROOMS: Readonly<Record<string, readonly string[]>> = {
  // The matching book and its memory layout: below everything, imports only domain/ (RULES.book).
  book: [],
  // The shard threads and their transport (ring, protocol, worker, link): books in, results out. Of the
  // tables above only the types of the rows a result updates.
  shard: ['book', 'engine-types.ts', 'lifecycle.ts', 'thread.ts', 'markets/market-table.ts', 'orders/order-table.ts'],
  // The market table and its administration (register, pause, resolve): tells the shards, charges the ledger.
  markets: ['book', 'shard', 'ledger/ledger.ts', 'engine-types.ts', 'group-commit.ts', 'lifecycle.ts', 'shard-router.ts'],
  // Admission and the order table: reserves on the ledger, sends to a shard's link.
  orders: ['book', 'ledger', 'shard/shard-link.ts', 'shard/link-types.ts', 'markets/market-table.ts', 'engine-types.ts', 'group-commit.ts', 'lifecycle.ts'],
  // Balances, reservations, settlement of fills and the trade lifecycle: applies what the shards report.
  ledger: ['book', 'shard', 'markets/market-table.ts', 'orders/order-table.ts', 'engine-types.ts', 'group-commit.ts', 'lifecycle.ts'],
};

/**
 * Import cycles that exist on main today in code other sessions are changing; each is the sorted list of
 * the files of one strongly connected component. The cycle rule passes exactly these components (a
 * cycle that grows or changes shape fails), and test/tools/check-imports.test.ts fails once an entry no
 * longer exists, so this list only shrinks. Empty is the goal.
 */
export const KNOWN_CYCLES: readonly (readonly string[])[] = [];

/**
 * Rule violations that exist on main today in files other sessions are changing; same contract as
 * KNOWN_CYCLES (an entry that no longer occurs fails the test).
 */
export const KNOWN_VIOLATIONS: readonly Violation[] = [];

export interface Violation {
  /** The importing file, relative to the src dir. */
  file: string;
  /** The specifier as written (for a cycle: the loop, `a.ts -> b.ts -> a.ts`). */
  target: string;
  rule: string;
}

export interface ImportRef {
  spec: string;
  typeOnly: boolean;
  kind: 'static' | 'dynamic' | 'worker';
}

const SOURCE = /\.(?:ts|mts|mjs|js)$/;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : SOURCE.test(p) && !p.endsWith('.d.ts') ? [p] : [];
  });
}

// Words after which a `/` starts a regular expression rather than a division.
const BEFORE_REGEX_WORDS = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'instanceof', 'yield', 'await']);

/**
 * The source with comments and the text of template literals blanked (line breaks kept), so that an
 * import written in a comment or in generated code is not taken for one. String literals stay: they
 * carry the specifiers. Expressions inside `${}` are code and stay.
 */
export function codeOnly(text: string): string {
  const out = text.split('');
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== '\n') out[k] = ' ';
  };
  // Brace depth at each open `${`, innermost last: its closing `}` resumes the template.
  const templates: number[] = [];
  let depth = 0;
  let last = -1; // index of the last significant code character
  let i = 0;
  const template = (start: number) => {
    // From just after a backtick or a `}` that closes `${`: up to the closing backtick or the next `${`.
    let j = start;
    while (j < text.length && text[j] !== '`' && !(text[j] === '$' && text[j + 1] === '{')) j += text[j] === '\\' ? 2 : 1;
    blank(start, j);
    if (text[j] === '$') {
      templates.push(depth);
      depth++;
      return j + 2;
    }
    return j + 1;
  };
  const regexAllowed = () => {
    if (last < 0) return true;
    const c = text[last];
    if (/[\w$]/.test(c)) {
      let s = last;
      while (s > 0 && /[\w$]/.test(text[s - 1])) s--;
      return BEFORE_REGEX_WORDS.has(text.slice(s, last + 1));
    }
    return !/[)\]}'"`]/.test(c);
  };
  while (i < text.length) {
    const c = text[i];
    const n = text[i + 1];
    if (c === '/' && n === '/') {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      blank(i, stop);
      i = stop;
    } else if (c === '/' && n === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      blank(i, stop);
      i = stop;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      last = j;
      i = j + 1;
    } else if (c === '`') {
      i = template(i + 1);
      last = i - 1;
    } else if (c === '}' && templates.length > 0 && templates[templates.length - 1] === depth - 1) {
      templates.pop();
      depth--;
      i = template(i + 1);
      last = i - 1;
    } else if (c === '/' && regexAllowed()) {
      let j = i + 1;
      let inClass = false;
      while (j < text.length && text[j] !== '\n' && (inClass || text[j] !== '/')) {
        if (text[j] === '\\') j++;
        else if (text[j] === '[') inClass = true;
        else if (text[j] === ']') inClass = false;
        j++;
      }
      last = j;
      i = j + 1;
    } else {
      if (c === '{') depth++;
      else if (c === '}') depth--;
      if (!/\s/.test(c)) last = i;
      i++;
    }
  }
  return out.join('');
}

// `import|export <clause> from 'x'`: a clause never holds quotes, `;`, `=` or parentheses, which keeps the
// match inside one declaration.
const STATIC = /(?:^|[\n;])\s*(?:import|export)\s+([^;'"`=()]*?)\s*\bfrom\s*(['"])([^'"\n]+)\2/g;
const BARE = /(?:^|[\n;])\s*import\s*(['"])([^'"\n]+)\1/g;
const DYNAMIC = /(\btypeof\s+)?\bimport\s*\(\s*(['"])([^'"\n]+)\2\s*\)(\s*\.\s*[\w$]+)?/g;
const WORKER = /\bnew\s+URL\s*\(\s*(['"])(\.{1,2}\/[^'"\n]+)\1\s*,\s*import\.meta\.url\s*\)/g;

/** True when the clause of a static import or re-export brings in types only (erased when compiled). */
function typeOnlyClause(clause: string): boolean {
  const c = clause.trim();
  if (/^type\s*[{*]/.test(c) || /^type\s+[\w$]+$/.test(c)) return true;
  const named = /^\{([^}]*)\}$/.exec(c);
  if (!named) return false;
  const specs = named[1].split(',').map((s) => s.trim()).filter(Boolean);
  return specs.length > 0 && specs.every((s) => /^type\s+(?!as\s+[\w$])[\w$]/.test(s));
}

/** Every import a source file makes, in order of kind. */
export function importsOf(text: string): ImportRef[] {
  const code = codeOnly(text);
  const out: ImportRef[] = [];
  for (const m of code.matchAll(STATIC)) out.push({ spec: m[3], typeOnly: typeOnlyClause(m[1]), kind: 'static' });
  for (const m of code.matchAll(BARE)) out.push({ spec: m[2], typeOnly: false, kind: 'static' });
  for (const m of code.matchAll(DYNAMIC)) {
    // `typeof import('x')` and `import('x').Name` are type positions; a value import is awaited or `.then`ed.
    const member = m[4]?.replace(/[\s.]/g, '');
    const typeOnly = m[1] !== undefined || (member !== undefined && !['then', 'catch', 'finally'].includes(member));
    out.push({ spec: m[3], typeOnly, kind: 'dynamic' });
  }
  for (const m of code.matchAll(WORKER)) out.push({ spec: m[2], typeOnly: false, kind: 'worker' });
  return out;
}

interface Edge {
  /** Target relative to the src dir (`../tools/x.ts` when outside it). */
  target: string;
  ref: ImportRef;
}

function graph(srcDir: string): Map<string, Edge[]> {
  const edges = new Map<string, Edge[]>();
  for (const file of files(srcDir)) {
    const rel = relative(srcDir, file).split('\\').join('/');
    edges.set(
      rel,
      importsOf(readFileSync(file, 'utf8')).map((ref) => {
        const path = ref.spec.replace(/[?#].*$/, '');
        const target = path.startsWith('.') ? relative(srcDir, resolve(dirname(file), path)).split('\\').join('/') : path;
        return { target, ref };
      }),
    );
  }
  return edges;
}

/** The room of a file under edge/ or engine/ (`edge/auth/auth.ts` -> `auth`), `.` for the area's own files. */
function roomOf(rel: string): string {
  const parts = rel.split('/');
  return parts.length > 2 ? parts[1] : '.';
}

/** The group of a file under edge/routes/ (`edge/routes/clob/trading.ts` -> `clob`), `.` for routes/'s own files. */
function routeGroupOf(rel: string): string {
  const parts = rel.split('/');
  return parts.length > 3 ? parts[2] : '.';
}

/** Whether `target` (relative to src/) is one the rooms table lets a file of `rel` (same area) import. */
function roomAllows(rooms: Readonly<Record<string, readonly string[]>>, area: string, rel: string, target: string): boolean {
  const from = roomOf(rel);
  const to = roomOf(target);
  const allowed = rooms[from];
  return from === '.' || from === to || allowed === undefined || allowed.includes(to) || allowed.includes(target.slice(area.length + 1));
}

function ruleViolations(edges: Map<string, Edge[]>): Violation[] {
  const out: Violation[] = [];
  for (const [rel, list] of edges) {
    const area = rel.split('/')[0];
    for (const { target, ref } of list) {
      const v = (rule: string) => out.push({ file: rel, target: ref.spec, rule });
      if (ref.spec === 'uWebSockets.js' && area !== 'edge') v(RULES.uws);
      if (ref.spec === 'uWebSockets.js' && area === 'edge' && !['http', 'ws', '.'].includes(roomOf(rel))) v(RULES.edgeUws);
      if (ref.spec === 'lmdb' && area !== 'journal') v(RULES.lmdb);
      if (ref.spec.startsWith('@nats-io/') && area !== 'replication') v(RULES.nats);
      if (!ref.spec.startsWith('.')) continue;
      if (target.startsWith('..')) {
        v(RULES.outside);
        continue;
      }
      const top = target.split('/')[0];
      const local = top === area;
      const wireTypes = target.startsWith('edge/schemas/') && ref.typeOnly;
      if (area === 'domain' && !local) v(RULES.domain);
      if (area === 'runtime' && !local && top !== 'domain') v(RULES.runtime);
      if (rel.startsWith('engine/book/') && !target.startsWith('engine/book/') && top !== 'domain') v(RULES.book);
      if (area === 'engine' && top === 'edge') v(RULES.engineEdge);
      if (area === 'edge' && top === 'engine' && !['engine/engine.ts', 'engine/book/api.ts', 'engine/shard-router.ts'].includes(target)) v(RULES.edgeEngine);
      if (area === 'edge' && top === 'journal' && !['journal/env.ts', 'journal/keys.ts'].includes(target)) v(RULES.edgeStorage);
      if (area === 'queries' && top === 'engine' && target !== 'engine/book/api.ts') v(RULES.queriesEngine);
      if (area === 'queries' && top === 'edge' && !wireTypes) v(RULES.queriesEdge);
      if (area === 'projections' && top === 'queries') v(RULES.projectionsQueries);
      if (area === 'replication' && !local && !['domain', 'runtime', 'journal'].includes(top) && target !== 'engine/engine.ts') v(RULES.replication);
      if (area === 'projections' && top === 'edge' && !wireTypes) v(RULES.projectionsEdge);
      if (top === 'node' && !local && area !== 'harness' && rel !== 'main.ts') v(RULES.nodeImporters);
      if (area === 'node' && top === 'harness') v(RULES.nodeHarness);
      if (area === 'edge' && local && !roomAllows(EDGE_ROOMS, area, rel, target)) v(RULES.edgeRooms);
      if (rel.startsWith('edge/routes/') && target.startsWith('edge/routes/') && routeGroupOf(rel) !== routeGroupOf(target)) v(RULES.routeGroups);
      if (area === 'engine' && local && !roomAllows(ENGINE_ROOMS, area, rel, target)) v(RULES.engineRooms);
    }
    if (area === 'edge' && roomOf(rel) !== '.' && !Object.hasOwn(EDGE_ROOMS, roomOf(rel))) {
      out.push({ file: rel, target: `edge/${roomOf(rel)}/`, rule: RULES.edgeRoomUnknown });
    }
    if (area === 'engine' && roomOf(rel) !== '.' && !Object.hasOwn(ENGINE_ROOMS, roomOf(rel))) {
      out.push({ file: rel, target: `engine/${roomOf(rel)}/`, rule: RULES.engineRoomUnknown });
    }
  }
  return out;
}

/**
 * The import cycles of src/: every strongly connected component of the file graph with more than one
 * file (or a file importing itself), each as its sorted files. Tarjan's algorithm, iterative.
 */
export function findCycles(srcDir = src): string[][] {
  return cyclesOf(graph(srcDir));
}

function cyclesOf(edges: Map<string, Edge[]>): string[][] {
  const next = (f: string) => [...new Set((edges.get(f) ?? []).map((e) => e.target).filter((t) => edges.has(t)))];
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let counter = 0;
  for (const start of [...edges.keys()].sort()) {
    if (index.has(start)) continue;
    const work: { node: string; succ: string[]; i: number }[] = [];
    const enter = (node: string) => {
      index.set(node, counter);
      low.set(node, counter++);
      stack.push(node);
      onStack.add(node);
      work.push({ node, succ: next(node), i: 0 });
    };
    enter(start);
    while (work.length > 0) {
      const top = work[work.length - 1];
      if (top.i < top.succ.length) {
        const w = top.succ[top.i++];
        if (!index.has(w)) enter(w);
        else if (onStack.has(w)) low.set(top.node, Math.min(low.get(top.node)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) !== index.get(top.node)) continue;
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== top.node);
      if (component.length > 1 || next(top.node).includes(top.node)) out.push(component.sort());
    }
  }
  return out.sort((a, b) => a[0].localeCompare(b[0]));
}

/** A shortest loop through the component's first file, `a.ts -> b.ts -> a.ts`, for the message. */
function loopOf(component: string[], edges: Map<string, Edge[]>): string {
  const members = new Set(component);
  const from = component[0];
  const prev = new Map<string, string>();
  const queue = [from];
  for (let q = 0; q < queue.length; q++) {
    for (const { target } of edges.get(queue[q]) ?? []) {
      if (!members.has(target)) continue;
      if (target === from) {
        const path = [from];
        for (let n = queue[q]; n !== from; n = prev.get(n)!) path.unshift(n);
        path.unshift(from);
        return path.join(' -> ');
      }
      if (!prev.has(target)) {
        prev.set(target, queue[q]);
        queue.push(target);
      }
    }
  }
  return component.join(' -> ');
}

const sameCycle = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((f, i) => f === b[i]);
const sameViolation = (a: Violation, b: Violation) => a.file === b.file && a.target === b.target && a.rule === b.rule;

/**
 * Every violation in the tree under `srcDir` (the src dir: its folders are the areas above), except
 * those listed in `known` (KNOWN_CYCLES and KNOWN_VIOLATIONS unless given).
 */
export function check(
  srcDir = src,
  known: { cycles?: readonly (readonly string[])[]; violations?: readonly Violation[] } = {},
): Violation[] {
  const { cycles = KNOWN_CYCLES, violations = KNOWN_VIOLATIONS } = known;
  const edges = graph(srcDir);
  const out = ruleViolations(edges).filter((v) => !violations.some((k) => sameViolation(k, v)));
  for (const component of cyclesOf(edges)) {
    if (cycles.some((k) => sameCycle(k, component))) continue;
    out.push({ file: component[0], target: loopOf(component, edges), rule: RULES.cycle });
  }
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const found = check();
  for (const x of found) console.error(`${x.file}: imports ${x.target}: ${x.rule}`);
  console.log(found.length === 0 ? 'import rules: ok' : `import rules: ${found.length} violation(s)`);
  process.exit(found.length === 0 ? 0 : 1);
}
