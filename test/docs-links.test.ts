/**
 * The documentation's links resolve inside this repository: every relative link of README.md and docs/*.md
 * (inline `[text](target)`, images, reference definitions `[name]: target`) names a file or directory that
 * exists here, never one outside it (a checkout elsewhere would not have it), and its `#anchor`, if any, is a
 * heading of the Markdown file it names (GitHub's anchors). Links inside code (fenced blocks, `inline`) are
 * not links; absolute URLs (http, https, mailto) are not checked.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The Markdown files whose links are checked. */
function documents(): string[] {
  const docs = join(root, 'docs');
  const out = [join(root, 'README.md')];
  if (existsSync(docs)) for (const f of readdirSync(docs)) if (f.endsWith('.md')) out.push(join(docs, f));
  return out;
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

function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(readFileSync(file, 'utf8'))) {
    const h = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const base = anchorOf(h[1]!);
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

test('every relative link of README.md and docs/*.md resolves to a file of this repository (and a heading, with #)', () => {
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

test('the checker finds what it must: a missing file, a path outside the repository, an unknown anchor; not links in code', () => {
  const readme = join(root, 'README.md');
  assert.equal(problem(readme, 'docs/decisions.md'), undefined);
  assert.equal(problem(readme, 'docs/nothing-here.md'), 'docs/nothing-here.md does not exist');
  assert.equal(problem(readme, '../shared/DESIGN.md'), '../shared/DESIGN.md leaves the repository');
  assert.equal(problem(readme, '#quick-start'), undefined);
  assert.equal(problem(readme, '#point-a-bot-at-it'), undefined);
  assert.equal(problem(readme, '#no-such-heading'), '#no-such-heading: no heading with that anchor');
  assert.equal(problem(readme, 'https://example.com/x'), undefined);
  assert.deepEqual(
    links('[a](x.md) ![i](img/p.png "t")\n`[c](code.md)`\n```\n[d](fenced.md)\n```\n[ref]: ../out.md').map((l) => l.target),
    ['x.md', 'img/p.png', '../out.md'],
  );
  assert.equal(anchorOf('Use it as a sandbox'), 'use-it-as-a-sandbox');
  assert.equal(anchorOf('The official client\'s profiles (`PROFILE=clob-v2`)'), 'the-official-clients-profiles-profileclob-v2');
});
