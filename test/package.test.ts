/**
 * What `npm ci` says on the Node the README names: every installed package accepts that Node (an `engines`
 * range that excludes it makes npm warn, as @nats-io/nuid 3.0.0 did with ">= 22.x"), and every package with
 * an install script is named in package.json's `allowScripts` (npm 11 warns about the others, and a later npm
 * will not run them: the native modules would not be built).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string }; allowScripts?: Record<string, boolean> };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
  packages: Record<string, { engines?: { node?: string }; hasInstallScript?: boolean; optional?: boolean }>;
};

/** The oldest Node the README and package.json promise: `>=20.10` -> [20, 10, 0]. */
function minimumNode(range: string): number[] {
  const m = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  assert.ok(m, `package.json engines.node ${range} is not ">=X.Y"`);
  return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
}

const cmp = (a: number[], b: number[]) => a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!;

/**
 * Whether `v` satisfies an engines range in the forms packages write (alternatives joined by `||`, each
 * `>= X[.Y[.Z]]` with `x` or `*` wildcards, `^X[.Y.Z]`, `X.*`); a form it does not read fails the test, to be
 * read by a person and added here.
 */
function satisfies(v: number[], range: string): boolean {
  return range.split('||').some((alt) => {
    const a = alt.trim();
    const parts = (s: string) => s.split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : 0));
    let m = /^>=\s*(\d+(?:\.(?:\d+|x|\*)){0,2})$/.exec(a);
    if (m) return cmp(v, [...parts(m[1]!), 0, 0].slice(0, 3)) >= 0;
    m = /^\^(\d+(?:\.\d+){0,2})$/.exec(a);
    if (m) {
      const base = [...parts(m[1]!), 0, 0].slice(0, 3);
      return v[0] === base[0] && cmp(v, base) >= 0;
    }
    m = /^(\d+)\.\*$/.exec(a);
    if (m) return v[0] === Number(m[1]);
    assert.fail(`an engines range this test does not read: ${JSON.stringify(range)}`);
  });
}

test('every installed package accepts the oldest Node the package promises (npm ci warns about none)', () => {
  const oldest = minimumNode(pkg.engines.node);
  assert.deepEqual(oldest, [20, 10, 0], 'README says Node.js 20.10 or newer');
  const refusing = Object.entries(lock.packages)
    .filter(([name, p]) => name !== '' && p.engines?.node !== undefined && !satisfies(oldest, p.engines.node))
    .map(([name, p]) => `${name} (${p.engines!.node})`);
  assert.deepEqual(refusing, []);
  // The reader of ranges reads what it claims to.
  assert.equal(satisfies([20, 10, 0], '>= 22.x'), false);
  assert.equal(satisfies([20, 10, 0], '^16 || ^18 || >=20'), true);
  assert.equal(satisfies([20, 10, 0], '>=20.11'), false);
  assert.equal(satisfies([20, 10, 0], '10.* || >= 12.*'), true);
});

test('every package with an install script is named in allowScripts, and allowScripts names no other', () => {
  const scripted = Object.entries(lock.packages)
    .filter(([, p]) => p.hasInstallScript === true)
    .map(([name]) => name.slice(name.lastIndexOf('node_modules/') + 'node_modules/'.length));
  assert.deepEqual(Object.keys(pkg.allowScripts ?? {}).sort(), [...new Set(scripted)].sort());
  assert.ok(Object.values(pkg.allowScripts ?? {}).every((v) => v === true));
});
