/**
 * Named snapshots and revert, in process (issue 43 item 1; DESIGN section 13): the node's side of the
 * sandbox's snapshot control (edge/sandbox/snapshots.ts). app.ts runs every ROLE=single node with the test
 * controls on through here; what it opens once, start-up's steps (app.ts START_STEPS), is a generation, and
 * a revert replaces the generation while the listener, its port and its connections stay.
 *
 *   take     the view writes held are issued and committed, then the checkpoint thread copies the store
 *            and proves a checkpoint at its seq (journal/checkpoints/snapshots.ts takeSnapshot); the directory is listed
 *            once whole (journal/checkpoints/named-snapshots.ts). A generated master key (DATA_DIR/master.key) goes
 *            with it, so the API keys it holds still work where it is loaded.
 *   revert   one at a time:
 *              1. the listener holds: every request that arrives answers 503 PM_ERR_REVERTING (Retry-After)
 *              2. the requests in flight finish (the revert's own aside), up to shutdown.graceMs
 *              3. the generation closes as a stop would, except the listener and the threads: sockets
 *                 first, with 1012 "service restart", then the demo traders, timers, samplers, the engine,
 *                 projections and the store, newest first (app.ts closers); the matching threads and the
 *                 signature pool stay for the next generation (kept-threads.ts), which resets the shards
 *              4. its store and checkpoints are set aside, the snapshot's copied in
 *              5. a new generation opens on them through the same start-up steps as any start, the
 *                 listener rebound to its routes (edge/server.ts rebind); the test clock is restored from
 *                 the snapshot's store as at any start
 *            The revert's answer leaves after step 5, so a read that follows it answers the snapshot's
 *            state. If step 5 fails, the set-aside store goes back and a generation opens on it (the
 *            revert answers 500 PM_ERR_REVERT_FAILED); if that fails too the listener keeps answering 503.
 *   proof    every start proves its store (journal/recovery.ts verifyStore: the tables against the
 *            journal, from a checkpoint). A revert to the snapshot the last revert opened reuses the proof
 *            that opening made instead (EngineOptions.proof): the same bytes are copied in again, so the
 *            proof holds, and the restore from it was checked then (its state hash). One proof is kept, the last
 *            snapshot's (about what the engine holds of it: its open orders and balances); it is proved
 *            again when the snapshot is taken again under its name or its file changed, and dropped with it.
 *            reverts.jsonl says which reverts proved (`proved`).
 *   audit    the store after a revert is the snapshot's, its journal the snapshot's history and then what
 *            follows: nothing of the abandoned timeline stays in it. Each revert appends a line to
 *            DATA_DIR/snapshots/reverts.jsonl (time, the snapshot, its seq and state hash, and the seq and
 *            state hash left behind) and logs it, so an operator can see that and when the history was
 *            rewound; the abandoned events themselves are not kept. Past 1 MiB the file keeps its newest
 *            1,000 lines.
 *   state    a state file (config sandbox.state, `--state`, startExchange({ state })) is imported as a
 *            named snapshot and, when DATA_DIR holds no store yet, installed before the first generation
 *            opens; a data dir that holds a store starts from it and the log says the state was not loaded.
 *
 * What a revert does not bring back, as a restart would not: settings kept only in memory (a maintenance
 * window or fault scenario set through the admin API: the configured ones come back), scenario events
 * still waiting, rate-limit windows (kept as they are: they measure clients, not the exchange), metrics.
 */
import { appendFileSync, copyFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { apiError } from '../domain/errors.ts';
import type { Checkpointer } from '../engine/checkpointer.ts';
import { serialize } from '../edge/pipeline/mounted.ts';
import { errorReply } from '../edge/pipeline/error-reply.ts';
import type { SnapshotControl } from '../edge/sandbox/snapshots.ts';
import type { ExportSnapshotReply, RevertReply, SnapshotInfo, SnapshotList, TakeSnapshotBody } from '../edge/schemas/snapshots.ts';
import type { ClockState } from '../edge/schemas/test-controls.ts';
import type { EdgeServer } from '../edge/server.ts';
import { DATA_FILE, fileSha256, type SnapshotManifest } from '../journal/checkpoints/snapshots.ts';
import { writeFileAtomic } from '../journal/durable-files.ts';
import { NamedSnapshotError, NamedSnapshots, dropAside, installCopy, restoreAside, stateManifest, type NamedManifest, type SnapshotInfo as StoredInfo } from '../journal/checkpoints/named-snapshots.ts';
import type { VerifiedStore } from '../journal/recovery.ts';
import type { Config } from '../runtime/config.ts';
import { KeptThreads } from './kept-threads.ts';
import type { Logger } from '../runtime/log.ts';

/** The file of a generated master key (edge/auth/auth.ts MASTER_KEY_FILE), carried by a snapshot. */
const MASTER_KEY = 'master.key';
export const REVERT_LOG = 'reverts.jsonl';
/** Past this size the log keeps its newest REVERT_LOG_KEEP lines: one line a revert, and a suite reverts before each test. */
const REVERT_LOG_MAX = 1 << 20;
const REVERT_LOG_KEEP = 1000;

/** Appends a revert's record to `dir`/reverts.jsonl; past `max` bytes the file is rewritten (atomically) with its newest `keep` lines. */
export function appendRevertRecord(dir: string, record: object, max = REVERT_LOG_MAX, keep = REVERT_LOG_KEEP): void {
  const file = join(dir, REVERT_LOG);
  appendFileSync(file, JSON.stringify(record) + '\n');
  if (statSync(file).size <= max) return;
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  writeFileAtomic(dir, REVERT_LOG, [Buffer.from(lines.slice(-keep).join('\n') + '\n')]);
}

/** What the host needs of one opening of the app (app.ts App). */
export interface Generation {
  readonly server: EdgeServer;
  readonly checkpointer?: Checkpointer;
  readonly ctx: {
    readonly engine: { readonly committedSeq: number; stateHash(): string };
    readonly controls?: { readonly clock: { state(): { now: number; frozen: boolean; offsetMs: number } } };
  };
  /** Issues the view writes held and waits for their commit: the store then holds every read. Answers the books' instants of last change. */
  quiesce(): Promise<{ seq: number; times: Array<[string, number]> }>;
  /** Closes what start-up opened except the listener; sockets get 1012 "service restart". */
  suspend(): Promise<void>;
  stop(graceMs?: number): Promise<void>;
}

/** What the host passes to each opening: the listener to serve behind (after the first) and itself. */
export interface OpenHooks {
  listener?: EdgeServer;
  snapshots: SnapshotControl;
  /** The snapshot's books' instants of last change, so /book and the streams answer its bodies byte for byte. */
  bookTimes?: ReadonlyMap<string, number>;
  /** The matching and signature threads, taken over by each opening (kept-threads.ts). */
  threads: KeptThreads;
  /** The proof of the snapshot's store from its last opening (see "proof" above; EngineOptions.proof). */
  proof?: VerifiedStore;
  /** Told the proof start-up made of the snapshot's store, to keep for the next revert to it. */
  onProof?: (verified: VerifiedStore) => void;
}

const wireInfo = (s: StoredInfo): SnapshotInfo => ({ name: s.name, seq: s.journalSeq, stateHash: s.stateHash, bytes: s.bytes, createdAt: new Date(s.createdAt).toISOString() });

/** A named-snapshot refusal in the contract's terms; a file the caller named that cannot be read or written is its `field`'s fault. */
function asApiError(e: unknown, name: string, max: number, field?: string): unknown {
  if (field !== undefined && typeof (e as NodeJS.ErrnoException)?.code === 'string' && (e as NodeJS.ErrnoException).syscall !== undefined) {
    return apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: [`${field}: ${(e as Error).message}`] });
  }
  if (!(e instanceof NamedSnapshotError)) return e;
  switch (e.problem) {
    case 'unknown': return apiError('PM_ERR_SNAPSHOT_UNKNOWN', { name });
    case 'exists': return apiError('PM_ERR_SNAPSHOT_EXISTS', { name });
    case 'limit': return apiError('PM_ERR_SNAPSHOT_LIMIT', { max });
    case 'name':
    case 'damaged': return apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: [e.message] });
  }
}

function clockOf(g: Generation): ClockState | undefined {
  const s = g.ctx.controls?.clock.state();
  if (s === undefined) return undefined;
  return { now: new Date(s.now).toISOString(), nowMs: s.now, time: Math.floor(s.now / 1000), frozen: s.frozen, offsetMs: s.offsetMs };
}

export class SnapshotHost<G extends Generation> implements SnapshotControl {
  private gen!: G;
  /** The state file's book times and proof hooks, for the first opening when it was installed. */
  private loaded: { hooks: Partial<OpenHooks>; keep: () => void } = { hooks: {}, keep: () => undefined };
  private reverting: Promise<unknown> | undefined;
  private stopped = false;

  private constructor(
    private readonly config: Readonly<Config>,
    private readonly log: Logger,
    private readonly snapshots: NamedSnapshots,
    private readonly open: (hooks: OpenHooks) => Promise<G>,
  ) {}

  private readonly threads = new KeptThreads();
  /** The proof of the last snapshot's store opened (see "proof" above), by proofKey. */
  private proof: { key: string; verified: VerifiedStore } | undefined;

  /**
   * What an opening of snapshot `dir` passes to the engine: the proof kept from the last opening of the
   * same snapshot, else a hook that keeps the proof start-up makes; `keep` stores it once the opening
   * succeeded. The engine changes neither (it restores from copies of what it changes).
   */
  private proofHooks(dir: string, manifest: NamedManifest): { hooks: Pick<OpenHooks, 'proof' | 'onProof'>; proved: boolean; keep: () => void } {
    const key = proofKey(dir, manifest);
    const kept = this.proof?.key === key ? this.proof.verified : undefined;
    if (kept !== undefined) return { hooks: { proof: kept }, proved: false, keep: () => undefined };
    let made: VerifiedStore | undefined;
    return {
      proved: true,
      hooks: { onProof: (v) => (made = v) },
      keep: () => {
        if (made !== undefined) this.proof = { key, verified: made };
      },
    };
  }

  /** Opens the first generation, after loading the configured state file into a data dir without a store. */
  static async start<G extends Generation>(config: Readonly<Config>, log: Logger, open: (hooks: OpenHooks) => Promise<G>): Promise<SnapshotHost<G>> {
    const snapshots = new NamedSnapshots(join(config.dataDir, 'snapshots'), config.sandbox.snapshots.max);
    const host = new SnapshotHost(config, log, snapshots, open);
    try {
      if (config.sandbox.state !== '') await host.loadState(config.sandbox.state);
      host.gen = await open({ snapshots: host, threads: host.threads, ...host.loaded.hooks });
      host.loaded.keep();
    } catch (err) {
      await host.threads.close();
      throw err;
    }
    return host;
  }

  get current(): G {
    return this.gen;
  }

  private async loadState(path: string): Promise<void> {
    const fresh = !existsSync(join(this.config.dataDir, DATA_FILE));
    // Loaded once already (a restart of the data dir it was loaded into): the copy kept is used.
    const named = stateManifest(path).name;
    const info = this.snapshots.list().find((s) => s.name === named) ?? (await this.snapshots.importState(path));
    if (!fresh) {
      this.log.warn({ state: path, snapshot: info.name }, 'DATA_DIR holds a store: started from it, the state file is kept as a snapshot and not loaded');
      return;
    }
    const { dir, manifest } = this.snapshots.get(info.name);
    const proof = this.proofHooks(dir, manifest);
    this.loaded = { hooks: { bookTimes: bookTimesOf(manifest), ...proof.hooks }, keep: proof.keep };
    installCopy(dir, this.config.dataDir);
    dropAside(this.config.dataDir);
    const key = join(dir, MASTER_KEY);
    if (this.config.auth.masterKey === '' && existsSync(key) && !existsSync(join(this.config.dataDir, MASTER_KEY))) copyFileSync(key, join(this.config.dataDir, MASTER_KEY));
    this.log.info({ state: path, snapshot: info.name, seq: info.journalSeq }, 'started from a state file');
  }

  // ---- SnapshotControl ----

  async take(body: TakeSnapshotBody): Promise<SnapshotInfo> {
    let name = body.name ?? '';
    try {
      if (body.state !== undefined) {
        name = body.name ?? stateManifest(body.state).name;
        return wireInfo(await this.snapshots.importState(body.state, name));
      }
      name = body.name ?? this.snapshots.freshName();
      const g = this.gen;
      const checkpointer = g.checkpointer;
      if (checkpointer === undefined) throw apiError('PM_ERR_UNAVAILABLE');
      const info = await this.snapshots.take(name, async (dir) => {
        const books = await g.quiesce();
        const m = await checkpointer.snapshot(dir, name);
        return { ...(await this.withMasterKey(dir, m)), books };
      });
      this.log.info({ snapshot: info.name, seq: info.journalSeq, bytes: info.bytes }, 'snapshot taken');
      return wireInfo(info);
    } catch (e) {
      throw asApiError(e, name, this.snapshots.max, 'state');
    }
  }

  /** A generated master key goes with the snapshot (listed in its manifest), so its API keys work where it is loaded. */
  private async withMasterKey(dir: string, m: SnapshotManifest): Promise<SnapshotManifest> {
    const key = join(this.config.dataDir, MASTER_KEY);
    if (this.config.auth.masterKey !== '' || !existsSync(key)) return m;
    copyFileSync(key, join(dir, MASTER_KEY));
    return { ...m, files: [...m.files, { name: MASTER_KEY, bytes: statSync(key).size, sha256: await fileSha256(key) }] };
  }

  list(): SnapshotList {
    return { snapshots: this.snapshots.list().map(wireInfo), max: this.snapshots.max };
  }

  remove(name: string): SnapshotInfo {
    try {
      const info = this.snapshots.list().find((s) => s.name === name);
      const { dir } = this.snapshots.get(name);
      this.snapshots.remove(name);
      // The proof kept, and the memory it holds, go with the snapshot it is of.
      if (this.proof?.key.startsWith(`${dir}|`)) this.proof = undefined;
      this.log.info({ snapshot: name }, 'snapshot deleted');
      return wireInfo(info!);
    } catch (e) {
      throw asApiError(e, name, this.snapshots.max);
    }
  }

  async exportTo(name: string, path: string): Promise<ExportSnapshotReply> {
    try {
      const info = await this.snapshots.pack(name, path);
      return { snapshot: wireInfo(info), path, bytes: statSync(path).size };
    } catch (e) {
      throw asApiError(e, name, this.snapshots.max, 'path');
    }
  }

  revert(name: string): Promise<RevertReply> {
    let snapshot: { dir: string; manifest: NamedManifest };
    try {
      snapshot = this.snapshots.get(name);
    } catch (e) {
      return Promise.reject(asApiError(e, name, this.snapshots.max));
    }
    // A second revert that got past the hold (it cannot: the hold answers it) would wait for the first.
    const run = (this.reverting ?? Promise.resolve()).then(() => this.revertTo(name, snapshot.dir, snapshot.manifest));
    this.reverting = run.catch(() => undefined);
    return run;
  }

  private async revertTo(name: string, dir: string, manifest: NamedManifest): Promise<RevertReply> {
    if (this.stopped) throw apiError('PM_ERR_UNAVAILABLE');
    const t0 = performance.now();
    const old = this.gen;
    const server = old.server;
    const held = { ...serialize(errorReply(apiError('PM_ERR_REVERTING', { name }))), headers: { 'Retry-After': '1' } };
    server.hold(held);
    const from = { seq: old.ctx.engine.committedSeq, stateHash: old.ctx.engine.stateHash() };
    const phases = { drainMs: 0, stopMs: 0, copyMs: 0, startMs: 0 };
    let t = performance.now();
    const lap = (k: keyof typeof phases) => {
      const now = performance.now();
      phases[k] = Math.round(now - t);
      t = now;
    };
    // The revert's own request stays in flight until its answer: wait for the others.
    await drainedBut(server, 1, this.config.shutdown.graceMs);
    lap('drainMs');
    await old.suspend();
    lap('stopMs');
    installCopy(dir, this.config.dataDir);
    lap('copyMs');
    const proof = this.proofHooks(dir, manifest);
    try {
      this.gen = await this.open({ listener: server, snapshots: this, threads: this.threads, bookTimes: bookTimesOf(manifest), ...proof.hooks });
      proof.keep();
    } catch (err) {
      this.log.error({ err, snapshot: name }, 'revert: the service did not start on the snapshot; starting again on the state before it');
      // A start that failed after it was serving let go of the hold: held again until the next one serves.
      server.hold(held);
      restoreAside(this.config.dataDir);
      try {
        this.gen = await this.open({ listener: server, snapshots: this, threads: this.threads });
      } catch (again) {
        this.log.fatal({ err: again }, 'revert: the service did not start again on the state before the revert; every request answers 503 until the process is restarted');
        throw apiError('PM_ERR_REVERT_FAILED', { name, detail: (err as Error).message });
      }
      throw apiError('PM_ERR_REVERT_FAILED', { name, detail: (err as Error).message });
    }
    lap('startMs');
    dropAside(this.config.dataDir);
    const tookMs = performance.now() - t0;
    const record = { at: new Date().toISOString(), snapshot: name, seq: manifest.journalSeq, stateHash: manifest.stateHash, from, tookMs: Math.round(tookMs), ...phases, proved: proof.proved };
    appendRevertRecord(this.snapshots.dir, record);
    this.log.info(record, 'reverted to snapshot');
    const clock = clockOf(this.gen);
    return {
      snapshot: wireInfo({ name, journalSeq: manifest.journalSeq, stateHash: manifest.stateHash, bytes: manifest.files.reduce((n, f) => n + f.bytes, 0), createdAt: manifest.createdAt }),
      from,
      ...(clock !== undefined ? { clock } : {}),
      tookMs,
      phases,
    };
  }

  /** Stops the generation running (after a revert under way) and the listener. */
  async stop(graceMs?: number): Promise<void> {
    this.stopped = true;
    await this.reverting;
    try {
      await this.gen.stop(graceMs);
    } finally {
      await this.threads.close();
    }
  }
}

/**
 * Which store a proof is of: a snapshot's directory, what its manifest says it holds (a snapshot taken again
 * under the name differs) and its store file as the file system sees it (a file replaced behind the
 * service's back is proved again).
 */
function proofKey(dir: string, m: NamedManifest): string {
  const f = statSync(join(dir, DATA_FILE));
  return `${dir}|${m.createdAt}|${m.journalSeq}|${m.stateHash}|${f.ino}|${f.size}|${f.mtimeMs}`;
}


/** A snapshot's book times, when they stand at its journal seq (nothing committed between the two). */
function bookTimesOf(m: NamedManifest): ReadonlyMap<string, number> | undefined {
  if (m.books === undefined || m.books.seq !== m.journalSeq || !Array.isArray(m.books.times)) return undefined;
  return new Map(m.books.times);
}

/** Resolves once at most `n` requests are in flight on the server, or after `ms`. */
async function drainedBut(server: EdgeServer, n: number, ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (server.inFlight.size > n && performance.now() < until) await new Promise((r) => setTimeout(r, 2));
}
