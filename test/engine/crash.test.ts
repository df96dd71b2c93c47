/**
 * Crash safety: a child process trades under load and prints every acknowledgement as it gets it; the
 * parent kills it with SIGKILL at a random moment, then checks the store it left behind and restarts it on
 * the same directory. Twelve rounds. After each kill:
 *   - every acknowledged order is in the orders table with its acknowledged trade ids, and each of those
 *     fills is in the fills table; every acknowledged cancel left its order canceled;
 *   - recovery's proof holds: the state hash of the tables equals the hash of the journal replay;
 *   - USDC is conserved: wallets + collateral (complete sets) == deposits - withdrawals, with every
 *     acknowledged deposit counted;
 *   - the restarted child recovers (Engine.open re-checks everything) and reports that same state hash.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readFillsFrom } from '../../src/journal/codecs/fill-codec.ts';
import { readOrder } from '../../src/journal/orders.ts';
import { openStore } from '../../src/journal/env.ts';
import { USDC_ASSET } from '../../src/journal/keys.ts';
import { verifyStore } from '../../src/journal/recovery.ts';
import { tempStore } from '../fixtures/engine-harness.ts';

const CHILD = fileURLToPath(new URL('../fixtures/engine-load-child.ts', import.meta.url));
const ROUNDS = 12;

interface Round {
  ready: string | undefined;
  acks: Array<{ orderId: string; ok: boolean; status: string; tradeIds: string[] }>;
  cancels: string[];
  deposits: number;
  failed: string | undefined;
}

function runChild(dir: string, seed: number, killAfterMs: number): Promise<Round> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, String(seed), '2'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const round: Round = { ready: undefined, acks: [], cancels: [], deposits: 0, failed: undefined };
    let buf = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const f = line.split(' ');
        if (f[0] === 'READY') {
          round.ready = f[1];
          timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        } else if (f[0] === 'ACK') round.acks.push({ orderId: f[1], ok: f[2] === '1', status: f[4], tradeIds: f[5] === '-' ? [] : f[5].split(',') });
        else if (f[0] === 'CXL') round.cancels.push(f[1]);
        else if (f[0] === 'DEP') round.deposits++;
        else if (f[0] === 'RECOVERY_FAILED') round.failed = line;
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      if (timer !== undefined) clearTimeout(timer);
      if (round.failed === undefined && signal !== 'SIGKILL') round.failed = `child exited with ${code}: ${stderr.slice(-2000)}`;
      resolve(round);
    });
  });
}

test('acknowledged work survives SIGKILL at random moments', { timeout: 120_000 }, async () => {
  const env = tempStore('pm-crash-');
  const dir = env.dir;
  await env.store.close();
  let seedRng = 12345;
  const rnd = (n: number) => ((seedRng = (seedRng * 1103515245 + 12345) % 2 ** 31) % n);
  let expectedHash: string | undefined;
  let totalAcks = 0;
  let totalFills = 0;
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const r = await runChild(dir, round, 150 + rnd(900));
      assert.equal(r.failed, undefined, `round ${round}: ${r.failed}`);
      assert.ok(r.ready !== undefined, `round ${round}: child never got ready`);
      if (expectedHash !== undefined) assert.equal(r.ready, expectedHash, `round ${round}: recovered state hash`);

      const store = openStore({ dataDir: dir });
      try {
        const verified = verifyStore(store);
        expectedHash = verified.hash;

        const fillIds = new Set<string>();
        for (const f of readFillsFrom(store.fills)) fillIds.add(f.tradeId);
        for (const a of r.acks) {
          if (!a.ok) continue;
          const rec = readOrder(store, a.orderId);
          assert.ok(rec !== undefined, `round ${round}: acknowledged order ${a.orderId} is missing`);
          assert.equal(rec.response.status, a.status);
          assert.deepEqual(rec.response.tradeIds, a.tradeIds);
          for (const t of a.tradeIds) {
            assert.ok(rec.tradeIds.includes(t), `round ${round}: trade ${t} missing from order ${a.orderId}`);
            assert.ok(fillIds.has(t), `round ${round}: acknowledged fill ${t} is missing`);
          }
          totalFills += a.tradeIds.length;
        }
        for (const id of r.cancels) {
          const rec = readOrder(store, id);
          assert.equal(rec?.status, 'CANCELED', `round ${round}: acknowledged cancel of ${id}`);
        }
        totalAcks += r.acks.length;
        if (process.env.CRASH_DEBUG) console.log(`round ${round}: ${r.acks.length} acks, ${r.cancels.length} cancels, ${r.deposits} deposits`);

        const m = verified.materialized;
        const supply = new Map<string, number>();
        let wallets = 0;
        for (const b of m.balances) {
          if (b.asset === USDC_ASSET) wallets += b.held;
          else supply.set(b.asset, (supply.get(b.asset) ?? 0) + b.held);
        }
        let collateral = 0;
        for (const mk of m.markets) {
          const s0 = supply.get(mk.tokenIds[0]) ?? 0;
          const s1 = supply.get(mk.tokenIds[1]) ?? 0;
          assert.equal(s0, s1, `round ${round}: ${mk.conditionId} supplies are complete sets`);
          collateral += s0;
        }
        assert.equal(wallets + collateral, m.netDeposits, `round ${round}: USDC conserved`);
      } finally {
        await store.close();
      }
    }
    assert.ok(totalAcks > 1000, `enough load: ${totalAcks} acknowledgements`);
    assert.ok(totalFills > 100, `enough fills: ${totalFills}`);
  } finally {
    const { rmSync } = await import('node:fs');
    rmSync(dir, { recursive: true, force: true });
  }
});
