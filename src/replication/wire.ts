/**
 * The wire format of a replicated batch, one JetStream message per replication-log record
 * (journal/replication-log.ts): the record's authenticator (seal.ts `mac` with the `records` key, 32 bytes,
 * over the stream's subject and the body), then the body, msgpack (msgpackr, the encoder lmdb-js itself
 * uses) of
 *
 *   { v: 3, r, T?, t, j?, e?, f?, p?, rows?, a? }
 *
 *   v     format version: 3 is written and read; a replica refuses any other (it cannot know what an
 *         unknown version means). Versions 1 and 2 carried an unkeyed digest that anyone could compute, so
 *         a record of theirs proves nothing and is refused like a forgery: a stream written by an older
 *         build is replaced, not read (docs/cluster.md, "Running more than one node": delete the stream and restart
 *         the sequencer, which publishes its whole replication log again; the stores' own logs hold
 *         records, not wire bytes, and are unchanged)
 *   r     replication sequence: consecutive from 1, the message id (`Nats-Msg-Id: r<r>`, or `T<T>.r<r>` with a
 *         term: a deposed sequencer's record is never taken for the new term's of the same rseq) so a
 *         republish is deduplicated by the stream
 *   T     the issuing sequencer's term, its lease's fencing token (absent without a lease); a replica refuses a
 *         record of a term lower than one it applied
 *   t     ms since the epoch when the sequencer issued the record
 *   j     [first, last] journal seqs of the batch (first = last + 1: rows without events)
 *   e     [seq, value] of the journal table, values as stored (order/status records as bytes)
 *   f     [first fill seq, block bytes] of the fills table
 *   p     the trade-id prefix of the sequencer's store (the first bytes of every trade id)
 *   rows  the rows the batch put beside its events (orders, balances, markets, trades, net deposits)
 *   a     catalog / index / profile / API-key / midpoint-sample / reward-accrual writes: [db, key, value] puts, [db, key] removes
 *
 * The authenticator binds the subject, so a record copied onto another subject (another stream's) fails, and
 * the body, which names its rseq and term, so a record cannot stand at another place in the stream. One
 * HMAC per record, computed once as it commits (publisher.ts's outbox keeps the bytes).
 *
 * decodeBatch checks the authenticator and the shape, so a forged or corrupt message is refused before
 * anything reads it (a flipped bit inside a value would otherwise decode as another value).
 */
import { isObj, packr, unpackObject } from './msgpack.ts';
import { isTradeIdKey } from '../journal/codecs/trade-ids.ts';
import type { ReplicatedBatch } from '../journal/replication-log.ts';
import { MAC_BYTES, type ClusterKeys } from './seal.ts';

export const WIRE_VERSION = 3;
/** Versions this build reads. */
const READS = [3];

export class WireError extends Error {}

/** Thrown for a record that is not authenticated by the nodes' key for this subject. */
export class WireAuthError extends WireError {}

/** The stream's message id of a record: a term's records never share an id with another term's. */
export const messageIdOf = (b: Pick<ReplicatedBatch, 'r' | 'T'>) => (b.T === undefined ? `r${b.r}` : `T${b.T}.r${b.r}`);

/** The message of record `b` on the stream's `subject` (nats-link.ts subjectOf). */
export function encodeBatch(b: ReplicatedBatch, keys: ClusterKeys, subject: string): Uint8Array {
  const body = packr.pack({ v: WIRE_VERSION, ...b });
  return Buffer.concat([keys.mac('records', [subject], body), body]);
}

const isSeq = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

/** Decodes and checks a batch that arrived on `subject`; throws WireError naming what is wrong. */
export function decodeBatch(bytes: Uint8Array, keys: ClusterKeys, subject: string): ReplicatedBatch {
  if (bytes.length <= MAC_BYTES) throw new WireError('too short');
  const body = bytes.subarray(MAC_BYTES);
  if (!keys.verify('records', bytes.subarray(0, MAC_BYTES), [subject], body)) {
    throw new WireAuthError(`not authenticated by the nodes' key for ${subject} (forged, another stream's, or written by a build before wire version 3)`);
  }
  const v = unpackObject(body, (why) => new WireError(why), 'a batch object');
  if (!READS.includes(v.v as number)) throw new WireError(`unknown batch version ${JSON.stringify(v.v)} (this build reads ${READS.join(' and ')})`);
  if (!isSeq(v.r) || v.r < 1) throw new WireError('bad replication sequence r');
  if (v.T !== undefined && (!isSeq(v.T) || v.T < 1)) throw new WireError('bad term T');
  if (typeof v.t !== 'number') throw new WireError('bad time t');
  if (v.j !== undefined) {
    const j = v.j;
    if (!Array.isArray(j) || j.length !== 2 || !isSeq(j[0]) || !isSeq(j[1]) || j[0] < 1 || j[0] > j[1] + 1) throw new WireError('bad journal range j');
    const [first, last] = j as [number, number];
    if (!Array.isArray(v.e) || !Array.isArray(v.f)) throw new WireError('a journal batch without e or f');
    let seen = 0;
    for (const x of v.e as unknown[]) {
      if (!Array.isArray(x) || x.length !== 2 || !isSeq(x[0]) || x[0] < first || x[0] > last || x[1] === null || x[1] === undefined) throw new WireError('bad journal entry in e');
      seen++;
    }
    for (const x of v.f as unknown[]) {
      if (!Array.isArray(x) || x.length !== 2 || !isSeq(x[0]) || x[0] < first || x[0] > last || !(x[1] instanceof Uint8Array)) throw new WireError('bad fill block in f');
    }
    if (seen > last - first + 1) throw new WireError('more journal entries than the range holds');
    if (!isTradeIdKey(v.p)) throw new WireError('bad trade-id prefix p');
  } else if (v.e !== undefined || v.f !== undefined || v.rows !== undefined) {
    throw new WireError('journal entries or rows without a journal range');
  }
  if (v.rows !== undefined && !isObj(v.rows)) throw new WireError('bad rows');
  if (v.rows !== undefined) {
    const rows = v.rows;
    for (const k of ['o', 'b', 'm', 't'] as const) if (rows[k] !== undefined && !Array.isArray(rows[k])) throw new WireError(`bad rows.${k}`);
    if (rows.n !== undefined && !Number.isSafeInteger(rows.n)) throw new WireError('bad rows.n');
  }
  if (v.a !== undefined) {
    if (!Array.isArray(v.a)) throw new WireError('bad aux writes a');
    for (const w of v.a as unknown[]) {
      if (!Array.isArray(w) || (w.length !== 2 && w.length !== 3) || !['c', 'i', 'p', 'k', 'm', 'v'].includes(w[0] as string)) throw new WireError('bad aux write in a');
    }
  }
  const { v: _v, ...batch } = v;
  return batch as unknown as ReplicatedBatch;
}
