/**
 * Reads back the journal archives retention writes (src/journal/retention.ts, `history.journal.retention:
 * archive`), for an operator's audit:
 *
 *   npx tsx tools/journal-archive.ts list   [--data-dir DIR | --archive-dir DIR]
 *   npx tsx tools/journal-archive.ts cat    FILE [--from SEQ] [--to SEQ]      one JSON event per line
 *   npx tsx tools/journal-archive.ts verify [--data-dir DIR] [--archive-dir DIR] [--checkpoints DIR]
 *
 * `verify` reads every archive from seq 1 on (each checked: digest, count, no gap inside and none between
 * files), replays them as start-up would replay the journal (journal/recovery.ts), and compares the state
 * hash at the end of each archive with every checkpoint that stands at that seq (DATA_DIR/checkpoints): the
 * oldest checkpoint retention kept stands where the archives end, so a match proves that the archived
 * history leads to the state the running store was proved from. Exit code 1 on any failure.
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CheckpointStore } from '../src/journal/checkpoints/checkpoints.ts';
import { hashState, replayEvents, type ReplayResult } from '../src/journal/recovery.ts';
import { listArchives, readArchive, type ArchiveEntry } from '../src/journal/retention.ts';
import type { JournalEvent } from '../src/domain/events.ts';

export interface VerifyReport {
  /** The seq the archives run to (0: none). */
  to: number;
  events: number;
  /** State hash after the last archive's events. */
  stateHash: string | undefined;
  /** Checkpoints standing at an archive's end, and whether the replay reached their state hash. */
  checkpoints: Array<{ name: string; seq: number; ok: boolean }>;
  problems: string[];
}

/** Replays every archive of `archiveDir` from seq 1 and compares with the checkpoints at their ends. */
export function verifyArchives(archiveDir: string, checkpointDir?: string): VerifyReport {
  const archives = listArchives(archiveDir);
  const report: VerifyReport = { to: 0, events: 0, stateHash: undefined, checkpoints: [], problems: [] };
  const checkpoints = checkpointDir === undefined ? [] : new CheckpointStore(checkpointDir).list();
  let base: ReplayResult | undefined;
  let expect = 1;
  for (const a of archives) {
    if (a.from !== expect) {
      report.problems.push(`${a.file}: starts at seq ${a.from}, the archives before it end at ${expect - 1}`);
      break;
    }
    let events: JournalEvent[];
    try {
      events = readArchive(a.file).events;
    } catch (e) {
      report.problems.push((e as Error).message);
      break;
    }
    try {
      base = replayEvents(events, base === undefined ? undefined : { state: base.checkpoint(), stateHash: hashState(base.state) });
    } catch (e) {
      report.problems.push(`${a.file}: ${(e as Error).message}`);
      break;
    }
    report.to = a.to;
    report.events += events.length;
    report.stateHash = hashState(base.state);
    for (const c of checkpoints.filter((x) => x.seq === a.to)) {
      const ok = new CheckpointStore(checkpointDir!).header(c).stateHash === report.stateHash;
      report.checkpoints.push({ name: c.name, seq: c.seq, ok });
      if (!ok) report.problems.push(`checkpoint ${c.name} at seq ${c.seq}: its state hash differs from the archives' replay`);
    }
    expect = a.to + 1;
  }
  return report;
}

function archiveDirOf(values: { 'data-dir'?: string; 'archive-dir'?: string }): string {
  if (values['archive-dir'] !== undefined) return resolve(values['archive-dir']);
  return join(resolve(values['data-dir'] ?? process.env.DATA_DIR ?? './data'), 'archive');
}

function main(argv: string[]): number {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'data-dir': { type: 'string' },
      'archive-dir': { type: 'string' },
      checkpoints: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
    },
  });
  const [cmd, file] = positionals;
  if (cmd === 'list') {
    const list: ArchiveEntry[] = listArchives(archiveDirOf(values));
    for (const a of list) console.log(`${a.from}..${a.to}\t${a.file}`);
    if (list.length === 0) console.log('no archives');
    return 0;
  }
  if (cmd === 'cat' && file !== undefined) {
    const from = values.from === undefined ? 0 : Number(values.from);
    const to = values.to === undefined ? Number.POSITIVE_INFINITY : Number(values.to);
    for (const e of readArchive(resolve(file)).events) if (e.seq >= from && e.seq <= to) console.log(JSON.stringify(e));
    return 0;
  }
  if (cmd === 'verify') {
    const dataDir = resolve(values['data-dir'] ?? process.env.DATA_DIR ?? './data');
    const r = verifyArchives(archiveDirOf(values), values.checkpoints ?? join(dataDir, 'checkpoints'));
    console.log(`archives: seqs 1..${r.to}, ${r.events} events, state hash ${r.stateHash ?? '-'}`);
    for (const c of r.checkpoints) console.log(`checkpoint ${c.name} at seq ${c.seq}: ${c.ok ? 'the same state' : 'DIFFERS'}`);
    for (const p of r.problems) console.error(p);
    return r.problems.length > 0 ? 1 : 0;
  }
  console.error('usage: journal-archive.ts list|cat FILE|verify (see the header)');
  return 2;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
