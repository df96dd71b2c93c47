/**
 * Folds V8 .cpuprofile files (node --cpu-prof) into self and inclusive time per function, for finding
 * where the main thread's time goes: `npx tsx bench/stream/fold-profile.ts <dir or file> [top N]`.
 * Inclusive time counts a function once per sample however deep it recurses.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface Folded {
  totalMs: number;
  self: Map<string, number>;
  inclusive: Map<string, number>;
}

const nameOf = (n: Node) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(src|node_modules|tools)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;

export function fold(p: Profile): Folded {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let totalMs = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const ms = (p.timeDeltas[i + 1] ?? 0) / 1000;
    totalMs += ms;
    let id: number | undefined = p.samples[i];
    const leaf = byId.get(id)!;
    self.set(nameOf(leaf), (self.get(nameOf(leaf)) ?? 0) + ms);
    const seen = new Set<string>();
    while (id !== undefined) {
      const k = nameOf(byId.get(id)!);
      if (!seen.has(k)) {
        seen.add(k);
        inclusive.set(k, (inclusive.get(k) ?? 0) + ms);
      }
      id = parent.get(id);
    }
  }
  return { totalMs, self, inclusive };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = process.argv[2]!;
  const top = Number(process.argv[3] ?? 30);
  const files = statSync(arg).isDirectory() ? readdirSync(arg).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(arg, f)) : [arg];
  for (const f of files) {
    const r = fold(JSON.parse(readFileSync(f, 'utf8')) as Profile);
    if (r.totalMs < 1000) continue;
    console.log(`\n${f}: ${(r.totalMs / 1000).toFixed(1)} s sampled`);
    const show = (m: Map<string, number>, title: string) => {
      console.log(`  ${title}`);
      for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${v.toFixed(0).padStart(7)} ms ${((100 * v) / r.totalMs).toFixed(1).padStart(5)}%  ${k}`);
    };
    show(r.self, 'self');
    show(r.inclusive, 'inclusive');
  }
}
