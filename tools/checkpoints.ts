/**
 * An operator's hands on a store's checkpoints (src/journal/checkpoints/checkpoints.ts; docs/cluster.md, "History:
 * checkpoints, retention, snapshots"):
 *
 *   npx tsx tools/checkpoints.ts list   [--data-dir DIR]              name, journal seq, state hash, time, bytes
 *   npx tsx tools/checkpoints.ts write  NAME [--data-dir DIR]         prove the store as committed now, keep it as NAME
 *   npx tsx tools/checkpoints.ts export NAME FILE [--data-dir DIR]    the newest checkpoint named NAME, to FILE
 *   npx tsx tools/checkpoints.ts import FILE [NAME] [--data-dir DIR]  FILE (checked) into the store's checkpoints
 *   npx tsx tools/checkpoints.ts remove NAME [--data-dir DIR]
 *
 * `write` reads the store through one LMDB read transaction (journal/checkpoints/checkpoint-writer.ts), so it may run
 * beside a running service; the proof replays what followed the newest checkpoint. An imported checkpoint is
 * used by a start only on the store it was taken from (its header names it) and only when it proves the
 * tables there (journal/recovery.ts). Exit code 1 on any failure.
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { writeCheckpoint } from '../src/journal/checkpoints/checkpoint-writer.ts';
import { CheckpointStore } from '../src/journal/checkpoints/checkpoints.ts';
import { openStore } from '../src/journal/env.ts';

/** The command line (exported for the tests); returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { 'data-dir': { type: 'string' } } });
  const dataDir = resolve(values['data-dir'] ?? process.env.DATA_DIR ?? './data');
  const cs = new CheckpointStore(join(dataDir, 'checkpoints'));
  const [cmd, a, b] = positionals;
  const named = (name: string) => {
    const e = cs.list().find((x) => x.name === name);
    if (e === undefined) throw new Error(`no checkpoint named ${name} in ${cs.dir}`);
    return e;
  };
  switch (cmd) {
    case 'list':
      for (const e of cs.list()) {
        const h = cs.header(e);
        console.log(`${e.name}\tseq ${e.seq}\t${h.stateHash}\t${new Date(h.createdAt).toISOString()}\t${e.file}`);
      }
      return 0;
    case 'write': {
      if (a === undefined) break;
      const store = openStore({ dataDir });
      try {
        const r = writeCheckpoint(store, cs, a, { force: true });
        console.log(`${a} at seq ${r.seq}: state hash ${r.stateHash} (proved from ${r.from === undefined ? 'the journal\'s start' : `${r.from.name} at seq ${r.from.seq}`}, ${r.replayed} events replayed)`);
      } finally {
        await store.close();
      }
      return 0;
    }
    case 'export':
      if (a === undefined || b === undefined) break;
      cs.exportTo(named(a), resolve(b));
      return 0;
    case 'import': {
      if (a === undefined) break;
      const e = cs.importFrom(resolve(a), b);
      console.log(`${e.name} at seq ${e.seq}: ${e.file}`);
      return 0;
    }
    case 'remove':
      if (a === undefined) break;
      console.log(`${cs.remove(a)} removed`);
      return 0;
  }
  console.error('usage: checkpoints.ts list | write NAME | export NAME FILE | import FILE [NAME] | remove NAME  [--data-dir DIR]');
  return 2;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (e: unknown) => {
      console.error((e as Error).message);
      process.exitCode = 1;
    },
  );
}
