/**
 * Every ring record survives encode -> decode unchanged, including amounts near 2^53, and records of
 * the two rings fit their slots.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PlaceCommand } from '../../../src/engine/book/api.ts';
import * as P from '../../../src/engine/shard/protocol.ts';

const BIG = Number.MAX_SAFE_INTEGER - 7;

test('PLACE', () => {
  const w = new Float64Array(P.CMD_WORDS * 2);
  const cmd: PlaceCommand = { handle: BIG, owner: 7, outcome: 1, side: 1, tif: 3, postOnly: true, pricePips: 9999, sizeUnits: BIG - 1, budgetUnits: 123, expiresAt: 2_000_000_000 };
  P.encodePlace(w, P.CMD_WORDS, 42, cmd);
  assert.equal(w[P.CMD_WORDS + P.F_OP], P.OP_PLACE);
  const out = { ...cmd, handle: 0, postOnly: false };
  assert.equal(P.decodePlace(w, P.CMD_WORDS, out), 42);
  assert.deepEqual(out, cmd);
});

test('CANCEL, CANCEL_ALL_MARKET, REGISTER_MARKET, SNAPSHOT, STOP', () => {
  const w = new Float64Array(P.CMD_WORDS);
  P.encodeCancel(w, 0, 3, BIG);
  assert.deepEqual(P.decodeCancel(w, 0), { marketId: 3, handle: BIG });
  P.encodeCancelAllMarket(w, 0, 4, 3, 99);
  assert.equal(w[P.F_OP], P.OP_CANCEL_ALL_MARKET);
  assert.deepEqual(P.decodeCancelAllMarket(w, 0), { marketId: 4, reason: 3, reqId: 99 });
  const reg = { marketId: 5, tickPips: 10, minSizeUnits: 5_000_000, makerFeeBps: 1, takerFeeBps: 2, reqId: 6 };
  P.encodeRegister(w, 0, reg);
  assert.deepEqual(P.decodeRegister(w, 0), reg);
  P.encodeSnapshot(w, 0, 8, 9);
  assert.deepEqual(P.decodeSnapshot(w, 0), { marketId: 8, reqId: 9 });
  P.encodeStop(w, 0, 10);
  assert.deepEqual(P.decodeStop(w, 0), { reqId: 10 });
  const t = { reqId: 11, frozen: true, offsetMs: -5, atMs: BIG, untilSec: 0 };
  P.encodeReset(w, 0, t);
  assert.equal(w[P.F_OP], P.OP_RESET);
  assert.deepEqual(P.decodeTime(w, 0), t);
});

test('RESULT, FILL, CANCELED, SHARD_ERROR', () => {
  const w = new Float64Array(P.RES_WORDS);
  const r = { cmdOp: P.OP_PLACE, id: BIG, code: 4001, filledUnits: BIG, restingUnits: 0, marketId: 2 };
  P.encodeResult(w, 0, r);
  assert.equal(w[P.F_OP], P.R_RESULT);
  assert.deepEqual(P.decodeResult(w, 0), r);
  const f = {
    kind: 1 as const, takerHandle: 1, makerHandle: 2, takerOwner: 3, makerOwner: 4, takerOutcome: 0 as const, makerOutcome: 1 as const,
    takerSide: 0 as const, makerSide: 0 as const, sizeUnits: BIG, takerPricePips: 4000, makerPricePips: 6000, takerUsdc: 11, makerUsdc: 12,
    takerFee: 13, makerFee: 14, makerRemainingUnits: 15,
  };
  P.encodeFill(w, 0, 77, f);
  assert.deepEqual(P.decodeFill(w, 0), { ...f, marketId: 77 });
  const c = { handle: 9, owner: 8, outcome: 1 as const, side: 1 as const, pricePips: 100, remainingUnits: BIG, reason: 2 as const };
  P.encodeCanceled(w, 0, 66, c);
  assert.deepEqual(P.decodeCanceled(w, 0), { ...c, marketId: 66 });
  P.encodeShardError(w, 0, 5002);
  assert.equal(w[P.F_OP], P.R_SHARD_ERROR);
  assert.deepEqual(P.decodeShardError(w, 0), { code: 5002 });
});

test('opcodes are distinct', () => {
  const ops = [P.OP_PLACE, P.OP_CANCEL, P.OP_CANCEL_ALL_MARKET, P.OP_REGISTER_MARKET, P.OP_SNAPSHOT, P.OP_STOP, P.OP_EXPIRE, P.OP_TIME, P.OP_RESET, P.R_RESULT, P.R_FILL, P.R_CANCELED, P.R_SHARD_ERROR];
  assert.equal(new Set(ops).size, ops.length);
});
