/**
 * The documentation's links resolve inside this repository (issue 41: the docs as chapters, every link checked in
 * CI). Three kinds of reference, each a test:
 *   - links: every relative link of README.md and docs/**\/*.md (inline `[text](target)`, images, reference
 *     definitions `[name]: target`) names a file or directory that exists here, never one outside it (a checkout
 *     elsewhere would not have it), and its `#anchor`, if any, is a heading of the Markdown file it names
 *     (GitHub's anchors). Links inside code (fenced blocks, `inline`) are not links; absolute URLs are not checked.
 *   - paths: every inline code span of those documents that looks like a path of this repository (its first part
 *     is a top-level folder such as `src/` or `tools/`, or a folder of `src/` as the decision log writes them:
 *     `edge/auth.ts`, `engine/`) names a file or folder that exists, from the root or from `src/`; `{a,b}` and `*`
 *     are expanded against the tree. Built or generated places (`dist/`, `node_modules/`) are not checked.
 *   - sections: a reference by section name, `docs/x.md, "Name"` or `README "Name"` (also `("Name")` and `'s
 *     "Name"`), in the documents and in every source, test, tool, bench and console file, names a heading or a
 *     bold lead-in (`**Name ...**`) of that file that starts with Name: the decision log was split into chapters
 *     and the README's reference moved to docs/, and these references are how code finds its reasons.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Markdown files under a folder, recursively, sorted. */
function markdownUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.isDirectory()) out.push(...markdownUnder(join(dir, e.name)));
    else if (e.name.endsWith('.md')) out.push(join(dir, e.name));
  }
  return out;
}

/** The Markdown files whose links are checked: the README and every chapter under docs/. */
function documents(): string[] {
  return [join(root, 'README.md'), ...markdownUnder(join(root, 'docs'))];
}

/** The text outside fenced code blocks and inline code, line by line (line numbers kept). */
function prose(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const f = /^\s*(```|~~~)/.exec(line);
    if (f) {
      if (fence === undefined) fence = f[1];
      else if (fence === f[1]) fence = undefined;
      return '';
    }
    return fence === undefined ? line.replace(/(`+)[^`]*?\1/g, '') : '';
  });
}

/** Every link target of a Markdown text, with its line. */
function links(text: string): Array<{ line: number; target: string }> {
  const out: Array<{ line: number; target: string }> = [];
  prose(text).forEach((line, i) => {
    for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ line: i + 1, target: m[1]! });
    const def = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+["'(].*)?$/.exec(line);
    if (def) out.push({ line: i + 1, target: def[1]! });
  });
  return out;
}

/** GitHub's anchor of a heading: lowercase, punctuation but '-' and '_' dropped, spaces to '-'. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_~]/g, (c) => (c === '_' ? '_' : ''))
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The headings of a Markdown text, outside code. */
function headings(text: string): string[] {
  const out: string[] = [];
  for (const line of prose(text)) {
    const h = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (h) out.push(h[1]!);
  }
  return out;
}

function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const h of headings(readFileSync(file, 'utf8'))) {
    const base = anchorOf(h);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** What is wrong with a link of `file`, or undefined. */
function problem(file: string, target: string, repo = root): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined;
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  const dest = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
  const rel = relative(repo, dest);
  if (rel.startsWith('..') || rel.startsWith(sep) || resolve(repo, rel) !== dest) return `${target} leaves the repository`;
  if (!existsSync(dest)) return `${target} does not exist`;
  if (anchor !== undefined && anchor !== '' && statSync(dest).isFile() && dest.endsWith('.md') && !anchors(dest).has(anchor)) return `${target}: no heading with that anchor`;
  return undefined;
}

// --- paths in backticks ---------------------------------------------------------------------------------------

/** Top-level places whose paths are checked; `dist/`, `node_modules/`, `data/` are built or made at run time. */
const UNCHECKED = new Set(['dist', 'node_modules', 'data', 'test-results', '.git']);
const topLevel = (base: string) =>
  new Set(readdirSync(base, { withFileTypes: true }).filter((e) => e.isDirectory() && !UNCHECKED.has(e.name)).map((e) => e.name));
const ROOT_DIRS = topLevel(root);
const SRC_DIRS = topLevel(join(root, 'src'));
const ROOT_FILES = new Set(['package.json', 'package-lock.json', 'tsconfig.json', 'index.js', 'index.d.ts', 'README.md', '.gitignore']);

/**
 * Other projects whose files the documents name, as `<project> \`path\``: the platform's contracts and clients
 * (the decision log cites where a rule comes from). A path or a README right after one of them is theirs.
 */
const OTHER_PROJECTS = ['ctf-exchange', 'rs-clob-client', 'py-clob-client', 'builder-relayer-client', 'proxy-factories', 'betmirror', 'clob-client-v2'];
const theirs = (before: string) => OTHER_PROJECTS.some((p) => new RegExp(`(^|[\\s/(])${p}\\s*$`).test(before));

/** Every inline code span of a Markdown text outside fenced blocks, with its line and the words before it. */
function codeSpans(text: string): Array<{ line: number; code: string; before: string }> {
  const out: Array<{ line: number; code: string; before: string }> = [];
  let fence: string | undefined;
  let previous = '';
  text.split('\n').forEach((line, i) => {
    const f = /^\s*(```|~~~)/.exec(line);
    if (f) {
      if (fence === undefined) fence = f[1];
      else if (fence === f[1]) fence = undefined;
      return;
    }
    if (fence !== undefined) return;
    for (const m of line.matchAll(/(`+)(.+?)\1/g)) {
      const before = line.slice(0, m.index);
      out.push({ line: i + 1, code: m[2]!.trim(), before: before.trim() === '' ? previous : before });
    }
    previous = line;
  });
  return out;
}

/**
 * The repository path a code span names, or undefined when it does not look like one: one token of path
 * characters whose first part is a checked top-level folder (`tools/load.ts`), a folder of src/ (`edge/auth.ts`,
 * read from src/), or a top-level file (`package.json`). `<placeholders>`, URLs, options and absolute paths are not paths.
 */
function pathOf(code: string): { path: string; from: string } | undefined {
  if (!/^\.?[\w@][\w.@*{},/-]*$/.test(code) || code.includes('//')) return undefined;
  if (ROOT_FILES.has(code)) return { path: code, from: root };
  if (!code.includes('/')) return undefined;
  const first = code.split('/')[0]!;
  if (ROOT_DIRS.has(first)) return { path: code, from: root };
  if (SRC_DIRS.has(first)) return { path: code, from: join(root, 'src') };
  return undefined;
}

/** `a/{b,c}.ts` -> `a/b.ts`, `a/c.ts`. */
function expandBraces(p: string): string[] {
  const m = /\{([^{}]*)\}/.exec(p);
  if (!m) return [p];
  return m[1]!.split(',').flatMap((alt) => expandBraces(p.slice(0, m.index) + alt + p.slice(m.index + m[0].length)));
}

/** Whether a path (with `*` in its last parts) names something under `from`. */
function existsPattern(from: string, path: string): boolean {
  const parts = path.replace(/\/$/, '').split('/');
  const walk = (dir: string, i: number): boolean => {
    if (i === parts.length) return true;
    const part = parts[i]!;
    if (!part.includes('*')) return existsSync(join(dir, part)) && walk(join(dir, part), i + 1);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) return false;
    const re = new RegExp(`^${part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
    return readdirSync(dir).some((n) => re.test(n) && walk(join(dir, n), i + 1));
  };
  return walk(from, 0);
}

/** What is wrong with a code span, or undefined (also when it is not a path). */
function pathProblem(code: string): string | undefined {
  const p = pathOf(code);
  if (p === undefined) return undefined;
  const missing = expandBraces(p.path).filter((one) => !existsPattern(p.from, one));
  if (missing.length === 0) return undefined;
  return `\`${code}\` names ${missing.map((m) => relative(root, join(p.from, m)) || '.').join(', ')}, which does not exist`;
}

// --- references by section name -------------------------------------------------------------------------------

/** Files whose comments and strings may name a document's section. */
function sources(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (UNCHECKED.has(e.name)) continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|tsx|mjs|js|json|md)$/.test(e.name) && e.name !== 'package-lock.json') out.push(p);
    }
  };
  for (const d of ['src', 'test', 'tools', 'bench', 'console', 'examples', 'bin', 'config', 'docs']) if (existsSync(join(root, d))) walk(join(root, d));
  for (const f of ['README.md', 'index.js', 'index.d.ts', 'package.json']) out.push(join(root, f));
  // This file names sections that do not exist on purpose, to show the checker finds them.
  return out.filter((f) => f !== fileURLToPath(import.meta.url));
}

/**
 * Every `<document>, "Name"` of a text: the document is README (or README.md) or a docs/ path; a name may run over
 * a line break, with a comment's `*` or `//` at the start of the next line.
 */
function sectionRefs(text: string): Array<{ line: number; doc: string; name: string }> {
  const out: Array<{ line: number; doc: string; name: string }> = [];
  const brk = String.raw`(?:\s*\n[ \t]*(?:\*(?!\/)|\/\/|>)?[ \t]*|[ \t]+)`;
  const re = new RegExp(String.raw`(?<![\w/.-])(README(?:\.md)?|docs\/[\w\/.-]+?\.md)(?:'s)?(?:[,:]?${brk}\(?|\()"([^"\s][^"]{1,119}?)"`, 'g');
  for (const m of text.matchAll(re)) {
    if (theirs(text.slice(Math.max(0, m.index - 80), m.index))) continue;
    const line = text.slice(0, m.index).split('\n').length;
    out.push({ line, doc: m[1] === 'README' ? 'README.md' : m[1]!, name: m[2]!.replace(new RegExp(brk, 'g'), ' ').trim() });
  }
  return out;
}

/** Headings and bold lead-ins of a Markdown file, as a reference may name them. */
function sectionNames(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  // Per line, and over the whole text for a lead-in that wraps (a stray `**` elsewhere cannot hide one of either).
  const lines = prose(text);
  const bold = [...lines, lines.join('\n')].flatMap((l) => [...l.matchAll(/\*\*([^*]+?)\*\*/g)].map((m) => m[1]!));
  return [...headings(text), ...bold].map((n) => n.replace(/\s+/g, ' ').trim());
}

const namesCache = new Map<string, string[]>();
/** What is wrong with a reference by section name, or undefined. */
function sectionProblem(doc: string, name: string): string | undefined {
  const file = join(root, doc);
  if (!existsSync(file)) return `${doc} does not exist (named with "${name}")`;
  let names = namesCache.get(file);
  if (names === undefined) namesCache.set(file, (names = sectionNames(file)));
  const plain = (s: string) => s.replace(/`/g, '');
  if (names.some((n) => n.startsWith(name) || plain(n).startsWith(plain(name)))) return undefined;
  return `${doc} has no section "${name}"`;
}

// --- the tests ------------------------------------------------------------------------------------------------

test('every relative link of README.md and docs/**/*.md resolves to a file of this repository (and a heading, with #)', () => {
  const dead: string[] = [];
  let checked = 0;
  for (const file of documents()) {
    for (const l of links(readFileSync(file, 'utf8'))) {
      checked++;
      const p = problem(file, l.target);
      if (p !== undefined) dead.push(`${relative(root, file)}:${l.line}: ${p}`);
    }
  }
  assert.deepEqual(dead, []);
  assert.ok(checked > 0, 'the documents have links to check');
});

test('every repository path in backticks in README.md and docs/**/*.md names a file or folder that exists', () => {
  const dead: string[] = [];
  let checked = 0;
  for (const file of documents()) {
    for (const s of codeSpans(readFileSync(file, 'utf8'))) {
      if (pathOf(s.code) === undefined || theirs(s.before)) continue;
      checked++;
      const p = pathProblem(s.code);
      if (p !== undefined) dead.push(`${relative(root, file)}:${s.line}: ${p}`);
    }
  }
  assert.deepEqual(dead, []);
  assert.ok(checked > 100, `the documents name paths (${checked} checked)`);
});

test('every reference by section name (docs/x.md, "Name"; README "Name") names a section of that document', () => {
  const dead: string[] = [];
  let checked = 0;
  for (const file of sources()) {
    for (const r of sectionRefs(readFileSync(file, 'utf8'))) {
      checked++;
      const p = sectionProblem(r.doc, r.name);
      if (p !== undefined) dead.push(`${relative(root, file)}:${r.line}: ${p}`);
    }
  }
  assert.deepEqual(dead, []);
  assert.ok(checked > 50, `the repository names sections (${checked} checked)`);
});

test('the README is a front page: at most 300 lines, and every chapter of docs/ is on its map', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
  assert.ok(lines <= 300, `README.md has ${lines} lines`);
  const linked = new Set(links(readme).map((l) => l.target.split('#')[0]));
  const chapters = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  assert.deepEqual(chapters.filter((c) => !linked.has(c)), []);
});

test('each chapter of the decision log is at most 800 lines and the index links every one', () => {
  const index = readFileSync(join(root, 'docs/decisions.md'), 'utf8');
  const linked = new Set(links(index).map((l) => l.target.split('#')[0]));
  const chapters = readdirSync(join(root, 'docs/decisions')).filter((f) => f.endsWith('.md'));
  assert.ok(chapters.length >= 11, `${chapters.length} chapters`);
  for (const c of chapters) {
    const n = readFileSync(join(root, 'docs/decisions', c), 'utf8').split('\n').length - 1;
    assert.ok(n <= 800, `docs/decisions/${c} has ${n} lines`);
  }
  assert.deepEqual(chapters.filter((c) => !linked.has(`decisions/${c}`)), []);
});

test('the checker finds what it must: a missing file, a path outside the repository, an unknown anchor; not links in code', () => {
  const readme = join(root, 'README.md');
  assert.equal(problem(readme, 'docs/decisions.md'), undefined);
  assert.equal(problem(readme, 'docs/nothing-here.md'), 'docs/nothing-here.md does not exist');
  assert.equal(problem(readme, '../shared/DESIGN.md'), '../shared/DESIGN.md leaves the repository');
  assert.equal(problem(readme, '#quick-start'), undefined);
  assert.equal(problem(readme, '#point-a-bot-at-it'), undefined);
  assert.equal(problem(readme, '#no-such-heading'), '#no-such-heading: no heading with that anchor');
  assert.equal(problem(join(root, 'docs/decisions.md'), 'decisions/architecture.md#units'), undefined);
  assert.equal(problem(join(root, 'docs/decisions.md'), 'decisions/architecture.md#no-such'), 'decisions/architecture.md#no-such: no heading with that anchor');
  assert.equal(problem(readme, 'https://example.com/x'), undefined);
  assert.deepEqual(
    links('[a](x.md) ![i](img/p.png "t")\n`[c](code.md)`\n```\n[d](fenced.md)\n```\n[ref]: ../out.md').map((l) => l.target),
    ['x.md', 'img/p.png', '../out.md'],
  );
  assert.equal(anchorOf('Use it as a sandbox'), 'use-it-as-a-sandbox');
  assert.equal(anchorOf('The official client\'s profiles (`PROFILE=clob-v2`)'), 'the-official-clients-profiles-profileclob-v2');
});

test('the path checker: files and folders from the root or src/, braces and globs; what is not a path is left alone', () => {
  assert.equal(pathProblem('tools/load.ts'), undefined);
  assert.equal(pathProblem('src/harness/'), undefined);
  assert.equal(pathProblem('edge/schemas/{catalog,admin}.ts'), undefined);
  assert.equal(pathProblem('package.json'), undefined);
  assert.equal(pathProblem('tools/no-such-tool.ts'), '`tools/no-such-tool.ts` names tools/no-such-tool.ts, which does not exist');
  assert.equal(pathProblem('engine/no-such.ts'), '`engine/no-such.ts` names src/engine/no-such.ts, which does not exist');
  assert.equal(pathProblem('edge/schemas/{catalog,nothing}.ts'), '`edge/schemas/{catalog,nothing}.ts` names src/edge/schemas/nothing.ts, which does not exist');
  assert.equal(pathProblem('bench/**/*.bench.ts'), undefined);
  assert.equal(pathProblem('test/no-such-*.ts'), '`test/no-such-*.ts` names test/no-such-*.ts, which does not exist');
  for (const notPath of ['application/json', 'dist/console/', 'node_modules/.cache/', '/tmp/pm-base', 'http://127.0.0.1:8080', '--rate', 'a b/c.ts', 'POST /order', '<DATA_DIR>.deposed-<time>']) {
    assert.equal(pathOf(notPath), undefined, notPath);
  }
  assert.deepEqual(codeSpans('a `tools/x.ts` b ``c`d``\n```\n`in/fence.ts`\n```').map((s) => s.code), ['tools/x.ts', 'c`d']);
  const [external] = codeSpans('as the platform does (Polymarket/rs-clob-client\n  `src/lib.rs`)');
  assert.ok(external !== undefined && theirs(external.before) && pathProblem(external.code) !== undefined, 'another project\'s path is recognised as theirs');
});

test('the section checker: a reference over a comment\'s line break, each spelling, and a name no heading starts with', () => {
  const refs = sectionRefs([
    ' * as it is (docs/decisions/authentication.md, "Which uWebSockets.js',
    ' * build"); README "Demo wallets", README\'s "Point a bot at it", docs/cluster.md ("Gateways")',
    '// docs/decisions/engine.md, "No such',
    '// section".',
    'Polymarket/proxy-factories README, "Deployments"; "README.md"',
    '],',
  ].join('\n'));
  assert.deepEqual(refs, [
    { line: 1, doc: 'docs/decisions/authentication.md', name: 'Which uWebSockets.js build' },
    { line: 2, doc: 'README.md', name: 'Demo wallets' },
    { line: 2, doc: 'README.md', name: 'Point a bot at it' },
    { line: 2, doc: 'docs/cluster.md', name: 'Gateways' },
    { line: 3, doc: 'docs/decisions/engine.md', name: 'No such section' },
  ]);
  assert.deepEqual(refs.map((r) => sectionProblem(r.doc, r.name)), [undefined, undefined, undefined, undefined, 'docs/decisions/engine.md has no section "No such section"']);
  assert.equal(sectionProblem('docs/decisions/hardening.md', "The GC's marking threads"), undefined, 'a bold lead-in is a section');
  assert.equal(sectionProblem('docs/decisions.md', 'Gateways'), 'docs/decisions.md has no section "Gateways"', 'the index holds no sections');
  assert.equal(sectionProblem('docs/gone.md', 'Gateways'), 'docs/gone.md does not exist (named with "Gateways")');
});
