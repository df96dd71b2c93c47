/**
 * The trade lifecycle survives SIGKILL between its moves. The crash test's child (fixtures/engine-load-child.ts)
 * trades under load with short settlement delays, a share of trades RETRYING and a share of those FAILED,
 * so kills fall between fills and their MINED, RETRYING, FAILED and CONFIRMED moves. After each kill:
 *   - recovery's proof holds: the tables (balances with pending proceeds, the trades table's unsettled
 *     trades) equal the journal replay, and the restarted child reports that same state hash;
 *   - every acknowledged order and its fills are in the store;
 *   - USDC is conserved (pending proceeds and reversals included) and supplies are complete sets.
 * Then an engine opened on the store in process settles every trade left and the ledger checks hold.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { TradeEvent } from '../../../src/domain/events.ts';
import { Engine, type TradeSettlement } from '../../../src/engine/engine.ts';
import { readFillsFrom } from '../../../src/journal/codecs/fill-codec.ts';
import { openStore } from '../../../src/journal/env.ts';
import { USDC_ASSET } from '../../../src/journal/keys.ts';
import { readOrder } from '../../../src/journal/orders.ts';
import { readJournal, verifyStore } from '../../../src/journal/recovery.ts';
import { silentLogger } from '../../../src/runtime/log.ts';
import { invariants, tempStore, until } from '../../fixtures/engine-harness.ts';

const CHILD = fileURLToPath(new URL('../../fixtures/engine-load-child.ts', import.meta.url));
const ROUNDS = 6;
const SETTLE: TradeSettlement = { minedDelayMs: 40, confirmedDelayMs: 60, retryingShare: 0.3, retryDelayMs: 50, failedShare: 0.4, seed: 3 };

interface Round {
  ready: string | undefined;
  acks: Array<{ orderId: string; tradeIds: string[] }>;
  failed: string | undefined;
}

function runChild(dir: string, seed: number, killAfterMs: number): Promise<Round> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, String(seed), '1', JSON.stringify(SETTLE)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const round: Round = { ready: undefined, acks: [], failed: undefined };
    let buf = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const f = buf.slice(0, nl).split(' ');
        buf = buf.slice(nl + 1);
        if (f[0] === 'READY') {
          round.ready = f[1];
          timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        } else if (f[0] === 'ACK' && f[2] === '1') round.acks.push({ orderId: f[1], tradeIds: f[5] === '-' ? [] : f[5].split(',') });
        else if (f[0] === 'RECOVERY_FAILED') round.failed = f.join(' ');
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

test('trades settling across SIGKILLs recover to the same state and settle', { timeout: 120_000 }, async () => {
  const env = tempStore('pm-lifecycle-crash-');
  const dir = env.dir;
  await env.store.close();
  let expectedHash: string | undefined;
  let settlingAtKill = 0;
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const r = await runChild(dir, round, 250 + ((round * 337) % 700));
      assert.equal(r.failed, undefined, `round ${round}: ${r.failed}`);
      assert.ok(r.ready !== undefined, `round ${round}: child never got ready`);
      if (expectedHash !== undefined) assert.equal(r.ready, expectedHash, `round ${round}: recovered state hash`);

      const store = openStore({ dataDir: dir });
      try {
        const verified = verifyStore(store);
        expectedHash = verified.hash;
        settlingAtKill += verified.materialized.trades.length;
        const fillIds = new Set<string>();
        for (const f of readFillsFrom(store.fills)) fillIds.add(f.tradeId);
        for (const a of r.acks) {
          assert.ok(readOrder(store, a.orderId) !== undefined, `round ${round}: acknowledged order ${a.orderId} is missing`);
          for (const t of a.tradeIds) assert.ok(fillIds.has(t), `round ${round}: acknowledged fill ${t} is missing`);
        }
        const m = verified.materialized;
        const supply = new Map<string, number>();
        let wallets = 0;
        for (const b of m.balances) {
          if (b.asset === USDC_ASSET) wallets += b.held;
          else supply.set(b.asset, (supply.get(b.asset) ?? 0) + b.held);
        }
        let collateral = 0;
        for (const mk of m.markets) {
          assert.equal(supply.get(mk.tokenIds[0]) ?? 0, supply.get(mk.tokenIds[1]) ?? 0, `round ${round}: complete sets`);
          collateral += supply.get(mk.tokenIds[0]) ?? 0;
        }
        assert.equal(wallets + collateral, m.netDeposits, `round ${round}: USDC conserved`);
      } finally {
        await store.close();
      }
    }

    const store = openStore({ dataDir: dir });
    try {
      const moves = [...readJournal(store)].filter((e): e is TradeEvent => e.type === 'trade').map((e) => e.status);
      for (const s of ['RETRYING', 'MINED', 'CONFIRMED', 'FAILED']) assert.ok(moves.includes(s as TradeEvent['status']), `some trades went ${s}`);
      assert.ok(settlingAtKill > 0, 'kills fell while trades were settling');
      // Opened again with real timers: every trade left settles, and the books balance.
      const engine = await Engine.open({ store, shards: 1, log: silentLogger, trades: SETTLE });
      try {
        assert.equal(engine.stateHash(), expectedHash);
        await until(() => Object.values(engine.tradeSettlement().settling).every((n) => n === 0), 10_000);
        await engine.afterCommit();
        assert.deepEqual(invariants(engine), []);
        assert.equal(verifyStore(store).hash, engine.stateHash());
      } finally {
        await engine.close();
      }
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
