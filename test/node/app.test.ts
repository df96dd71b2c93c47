/**
 * The composition root (src/node/app.ts): one stack of closers serves a failed start and stop(). A start that
 * fails at any step, injected through AppOptions.afterStep or a real listen failure, closes everything it
 * opened: the store (its LMDB environment reports closed) and every thread and timer (the child process
 * that ran it exits by itself). stop() closes in the reverse order of opening, and a closer that fails
 * neither keeps the others from running nor goes unreported. The context is complete and frozen.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { START_STEPS, startApp } from '../../src/node/app.ts';
import { openStore, type Store } from '../../src/journal/env.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { importsOf } from '../../tools/check-imports.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURE = 'test/fixtures/app-start-failure.ts';

interface Outcome {
  scenario: string;
  error?: string;
  storeCloses: number;
  envClosed: boolean;
}

/** Runs the fixture over `scenarios`; resolves once it exits by itself, or with `hung` after `ms`. */
function runFailedStarts(scenarios: readonly string[], ms: number): Promise<{ outcomes: Outcome[]; code: number | null; hung: boolean; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'pm-app-'));
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, dir, ...scenarios], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise((resolvePromise) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      const outcomes = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Outcome);
      resolvePromise({ outcomes, code, hung: signal === 'SIGKILL', stderr });
    });
  });
}

test('a start that fails at any step closes what it opened: the store, and every thread and timer', { timeout: 180_000 }, async () => {
  const scenarios = [...START_STEPS, 'port-in-use'];
  // Two children of five scenarios each: every scenario pays for its threads, the machine has two cores.
  const halves = [scenarios.slice(0, 5), scenarios.slice(5)];
  const runs = await Promise.all(halves.map((h) => runFailedStarts(h, 120_000)));
  for (const [i, run] of runs.entries()) {
    assert.equal(
      run.hung,
      false,
      `a failed start left something running, so the process did not exit (scenarios ${halves[i].join(', ')}; run them one at a time with \`node --import tsx ${FIXTURE} <dir> <scenario>\`)`,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.outcomes.map((o) => o.scenario), halves[i], run.stderr);
  }
  for (const o of runs.flatMap((r) => r.outcomes)) {
    const expected = o.scenario === 'port-in-use' ? /^cannot listen on 127\.0\.0\.1:\d+$/ : new RegExp(`^injected failure after ${o.scenario}$`);
    assert.match(o.error ?? '(started)', expected, `${o.scenario}: the start fails with its own error`);
    assert.equal(o.storeCloses, 1, `${o.scenario}: the store is closed once`);
    assert.equal(o.envClosed, true, `${o.scenario}: the LMDB environment is closed`);
  }
});

test('stop() closes newest first; a closer that fails is reported after the others ran; the context is frozen and complete', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pm-app-'));
  const closed: string[] = [];
  const real = openStore({ dataDir });
  const store: Store = {
    ...real,
    close: async () => {
      closed.push('store');
      await real.close();
    },
  };
  try {
    const app = await startApp(testConfig({ dataDir, http: { port: 0 }, demo: false, auth: { signatureThreads: 1 }, rateLimits: { enabled: false } }), { log: silentLogger, store });
    const { ctx } = app;
    assert.ok(Object.isFrozen(ctx));
    assert.throws(() => Object.assign(ctx, { engine: undefined }), TypeError);
    assert.equal(ctx.state.ready, true);
    assert.ok(ctx.marketData !== undefined && ctx.catalog.read !== undefined && ctx.engine !== undefined);
    assert.ok('/openapi.json' in (ctx.openapi().paths as Record<string, unknown>), 'the document describes the table that serves it');

    const engineClose = ctx.engine.close.bind(ctx.engine);
    Object.defineProperty(ctx.engine, 'close', {
      value: async () => {
        closed.push('engine');
        await engineClose();
        throw new Error('engine close failed');
      },
    });
    const authClose = ctx.auth.close;
    Object.defineProperty(ctx.auth, 'close', {
      value: async () => {
        closed.push('auth');
        await authClose();
      },
    });
    await assert.rejects(app.stop(1000), /^Error: engine close failed$/);
    assert.deepEqual(closed, ['engine', 'auth', 'store'], 'the reverse of the opening order, past the failure');
    assert.equal(ctx.state.ready, false);
    assert.throws(() => real.meta.get('storeVersion'), 'the LMDB environment is closed');
    await assert.rejects(app.stop(), /engine close failed/, 'stop() is idempotent');
    assert.equal(closed.length, 3);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('ROLE=single loads neither cluster.ts, failover.ts nor the NATS clients: outside them, src/ names them only as types, and roles.ts and main.ts load them dynamically', () => {
  const roles = importsOf(readFileSync(join(ROOT, 'src/node/roles.ts'), 'utf8'));
  assert.ok(roles.some((r) => r.spec === './cluster.ts' && r.kind === 'dynamic'), 'cluster.ts is imported dynamically');
  const main = importsOf(readFileSync(join(ROOT, 'src/main.ts'), 'utf8'));
  assert.ok(main.some((r) => r.spec === './node/failover.ts' && r.kind === 'dynamic'), 'failover.ts is imported dynamically');
  const loaded: string[] = [];
  for (const rel of readdirSync(join(ROOT, 'src'), { recursive: true }) as string[]) {
    if (!rel.endsWith('.ts') || rel === 'node/cluster.ts' || rel === 'node/failover.ts' || rel.startsWith('replication/')) continue;
    for (const r of importsOf(readFileSync(join(ROOT, 'src', rel), 'utf8'))) {
      if (/(^|\/)(cluster|failover)\.ts$|\/replication\/|^@nats-io\//.test(r.spec) && !r.typeOnly && r.kind !== 'dynamic') loaded.push(`${rel} -> ${r.spec}`);
    }
  }
  assert.deepEqual(loaded, []);
});
