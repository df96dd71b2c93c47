/**
 * The package as another project gets it: `npm pack` (scripts skipped: the console is built by `npm ci`'s
 * prepare, as in CI), the tarball unpacked into a project of its own in a temporary directory, and then,
 * from that directory:
 *   - the tarball holds what runs (bin, entry, sources, configuration, the built console) and nothing of the
 *     repository's tests, benches or tools;
 *   - `npx pm-exchange` (the package's bin, through node_modules/.bin as npm links it) starts the exchange,
 *     prints its URL, admin token and the funded wallets with their test keys, answers over HTTP with that
 *     token, and on SIGINT stops with exit code 0 and removes its temporary store;
 *   - `import { startExchange } from 'pm-exchange'` in a plain ES module (no tsx flag: the entry registers
 *     it) starts an exchange and closes it, and the process then ends by itself.
 * The project's node_modules holds the package and, linked from the repository's node_modules, exactly the
 * packages `npm ls --omit=dev` lists (what `npm install ./pm-exchange-x.tgz` would install, without a
 * registry): a source file that imports a devDependency fails here as it would in the user's project.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEMO_WALLETS } from '../../src/demo/catalog.ts';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
let dir: string;
let project: string;
let files: string[];

/** The environment of a user's shell: none of this test runner's loader flags. */
const env = () => {
  const e: NodeJS.ProcessEnv = { ...process.env };
  delete e.NODE_OPTIONS;
  return e;
};

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'pm-pack-'));
  const packed = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })) as Array<{ filename: string; files: Array<{ path: string }> }>;
  files = packed[0]!.files.map((f) => f.path);
  project = join(dir, 'project');
  mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'a-bot', version: '1.0.0', type: 'module', private: true }));
  execFileSync('tar', ['-xzf', join(dir, packed[0]!.filename), '-C', join(project, 'node_modules')]);
  execFileSync('mv', [join(project, 'node_modules', 'package'), join(project, 'node_modules', 'pm-exchange')]);
  for (const name of productionPackages()) {
    if (name.startsWith('@')) mkdirSync(join(project, 'node_modules', name.split('/')[0]!), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', name), join(project, 'node_modules', name));
  }
  symlinkSync('../pm-exchange/bin/pm-exchange.js', join(project, 'node_modules', '.bin', 'pm-exchange'));
});

after(() => rmSync(dir, { recursive: true, force: true }));

/** The top-level packages of the repository's production dependency tree (nested ones come with their parent). */
function productionPackages(): string[] {
  const paths = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const top = new Set<string>();
  for (const line of paths.split('\n')) {
    // node_modules/<name> or node_modules/@<scope>/<name>; deeper ones (a/node_modules/b) are inside their parent.
    const parts = relative(ROOT, line.trim()).split(sep);
    if (parts[0] !== 'node_modules') continue;
    if (parts.length === 2 && !parts[1]!.startsWith('@')) top.add(parts[1]!);
    if (parts.length === 3 && parts[1]!.startsWith('@')) top.add(`${parts[1]}/${parts[2]}`);
  }
  assert.ok(top.has('tsx') && top.has('lmdb') && !top.has('@polymarket/clob-client-v2'), `unexpected tree: ${[...top].join(' ')}`);
  return [...top];
}

test('the tarball holds what runs and none of the repository\'s tests, benches or tools', () => {
  for (const f of ['package.json', 'index.js', 'index.d.ts', 'bin/pm-exchange.js', 'src/node/app.ts', 'src/harness/start.ts', 'src/engine/shard/worker.ts', 'config/default.json', 'config/clob-v2-compat.json', 'README.md']) {
    assert.ok(files.includes(f), `missing ${f}`);
  }
  assert.ok(files.some((f) => f.startsWith('dist/console/')), 'the built console');
  assert.deepEqual(files.filter((f) => /^(test|bench|tools|examples|console|docs)\//.test(f)), []);
});

test('npx pm-exchange from another project: prints the wallets and the token, serves, stops on SIGINT and cleans up', { timeout: 180_000 }, async () => {
  const child = spawn('npx', ['pm-exchange', '--port', '0', '--demo', 'off'], { cwd: project, env: env(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  try {
    for (const end = Date.now() + 150_000; !out.includes('Ctrl-C stops it.'); ) {
      assert.ok(Date.now() < end, `no banner:\n${out}\n${err}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const url = /Listening on\s+(\S+)/.exec(out)![1]!;
    const token = /Admin token\s+(\S+)/.exec(out)![1]!;
    const store = /Store\s+(\S+)/.exec(out)![1]!;
    for (const w of DEMO_WALLETS) {
      assert.ok(out.includes(`${w.address} (10000 USDC)`), `wallet ${w.address}`);
      assert.ok(out.includes(w.privateKey), `key of ${w.address}`);
    }
    assert.equal(typeof (await (await fetch(`${url}/time`)).json()), 'number');
    assert.equal((await fetch(`${url}/admin/clock`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
    assert.ok(existsSync(store));
    // npx runs the bin in a child of its own: the whole group gets the signal, as a terminal's Ctrl-C does.
    process.kill(-child.pid!, 'SIGINT');
    // npx itself may end by the signal at once; the exchange (its child) stops in order, then removes its store.
    const { code, signal } = await exited;
    assert.ok(code === 0 || signal === 'SIGINT', `npx ended with ${code ?? signal}: ${err}`);
    for (const end = Date.now() + 30_000; existsSync(store); ) {
      assert.ok(Date.now() < end, 'the temporary store is still there');
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.doesNotMatch(err, /shutdown failed|could not start/);
  } finally {
    // Whatever is left of the group this test started (nothing, when it passed).
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* the group is gone */
    }
  }
});

test('import { startExchange } from \'pm-exchange\' in a plain ES module: starts, closes, and the process ends', { timeout: 180_000 }, () => {
  const script = [
    "import { startExchange, HOUSE_TAKER } from 'pm-exchange';",
    "const ex = await startExchange({ demo: 'off' });",
    'const time = await (await fetch(`${ex.url}/time`)).json();',
    'const clock = await ex.admin.clock();',
    'console.log(JSON.stringify({ time, frozen: clock.frozen, wallets: ex.wallets.length, house: HOUSE_TAKER }));',
    'await ex.close();',
  ].join('\n');
  writeFileSync(join(project, 'uses-it.mjs'), script);
  const out = execFileSync(process.execPath, ['uses-it.mjs'], { cwd: project, env: env(), encoding: 'utf8', timeout: 170_000 });
  const r = JSON.parse(out.trim().split('\n').at(-1)!) as { time: number; frozen: boolean; wallets: number; house: string };
  assert.equal(typeof r.time, 'number');
  assert.deepEqual([r.frozen, r.wallets, r.house.length], [false, 5, 42]);
});
