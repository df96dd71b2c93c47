/**
 * The ELF import retargeting behind the uWS loader (src/edge/http/elf-imports.ts): each rule on small
 * synthetic images (test/fixtures/elf.ts), then the pinned uWS binary itself: exactly its three C23
 * imports change, nothing else does, and every byte that differs lies in the four dynamic-linking
 * sections.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ElfError, elfHash, readImports, readNeeds, retargetImports, type Retarget } from '../../../src/edge/http/elf-imports.ts';
import { PINNED, installedPackage } from '../../../src/edge/http/uws.ts';
import { fakeElf, type FakeElf } from '../../fixtures/elf.ts';

const LIBC = (versions: [string, number][]) => ({ file: 'libc.so.6', versions: versions.map(([name, index]) => ({ name, index })) });
const rt = (from: string, fromV: string, to: string, toV: string): Retarget => ({ from: { name: from, version: fromV }, to: { name: to, version: toV } });
const imports = (b: Buffer) => readImports(b).map((i) => `${i.name}@${i.version ?? '-'}`);
const needNames = (b: Buffer) => readNeeds(b).map((n) => `${n.file}:${n.name}`);

test('elfHash is the SysV ELF hash the linker stores in version needs', () => {
  assert.equal(elfHash('GLIBC_2.2.5'), 0x09691a75);
  assert.equal(elfHash(''), 0);
  // Long names exercise the high-nibble fold.
  assert.equal(elfHash('GLIBC_PRIVATE_LONG_NAME_0123456789'), elfHash('GLIBC_PRIVATE_LONG_NAME_0123456789'));
  const pkg = installedPackage();
  const real = readFileSync(join(pkg.dir, 'uws_linux_x64_115.node'));
  for (const n of readNeeds(real)) assert.equal(n.hash, elfHash(n.name), `${n.file} ${n.name}`);
});

test('a retarget to a name that already exists (as the tail of a longer one) and an existing version; the emptied need is unlinked', () => {
  const elf: FakeElf = {
    symbols: [{ name: '__isoc23_strtol', version: 'GLIBC_2.38' }, { name: 'memcpy', version: 'GLIBC_2.2.5' }],
    needs: [LIBC([['GLIBC_2.2.5', 2], ['GLIBC_2.38', 3]])],
  };
  const input = fakeElf(elf);
  const before = Buffer.from(input);
  const out = retargetImports(input, [rt('__isoc23_strtol', 'GLIBC_2.38', 'strtol', 'GLIBC_2.2.5')]);
  assert.ok(input.equals(before), 'the input buffer is never written');
  assert.deepEqual(imports(out), ['strtol@GLIBC_2.2.5', 'memcpy@GLIBC_2.2.5']);
  assert.deepEqual(needNames(out), ['libc.so.6:GLIBC_2.2.5'], 'GLIBC_2.38 no longer required');
});

test('the first need of a list can be unlinked too', () => {
  const out = retargetImports(
    fakeElf({ symbols: [{ name: '__isoc23_strtoul', version: 'GLIBC_2.38' }, { name: 'strtoul', version: 'GLIBC_2.2.5' }], needs: [LIBC([['GLIBC_2.38', 2], ['GLIBC_2.2.5', 3]])] }),
    [rt('__isoc23_strtoul', 'GLIBC_2.38', 'strtoul', 'GLIBC_2.2.5')],
  );
  assert.deepEqual(imports(out), ['strtoul@GLIBC_2.2.5', 'strtoul@GLIBC_2.2.5']);
  assert.deepEqual(needNames(out), ['libc.so.6:GLIBC_2.2.5']);
});

test('a new name is written over the old one in place, and a need used only by it is renamed to the new version', () => {
  const out = retargetImports(
    fakeElf({ symbols: [{ name: '__isoc23_sscanf', version: 'GLIBC_2.38' }, { name: 'sscanf', version: 'GLIBC_2.2.5' }], needs: [LIBC([['GLIBC_2.2.5', 2], ['GLIBC_2.38', 3]])] }),
    [rt('__isoc23_sscanf', 'GLIBC_2.38', '__isoc99_sscanf', 'GLIBC_2.7')],
  );
  // `sscanf` is tail-merged into `__isoc23_sscanf`: the rewrite leaves those bytes alone, so it still reads `sscanf`.
  assert.deepEqual(imports(out), ['__isoc99_sscanf@GLIBC_2.7', 'sscanf@GLIBC_2.2.5']);
  const renamed = readNeeds(out).find((n) => n.name === 'GLIBC_2.7');
  assert.deepEqual(renamed && { index: renamed.index, hash: renamed.hash }, { index: 3, hash: elfHash('GLIBC_2.7') });
});

test('refusals: a rewrite that would change another name, no room, a shared need, a hashed or defined symbol, odd files', () => {
  const refuses = (f: () => unknown, pattern: RegExp) => assert.throws(f, (e: unknown) => e instanceof ElfError && pattern.test(e.message));
  // `c23_sscanf` points into `__isoc23_sscanf`, at bytes the rename would change.
  refuses(
    () => retargetImports(fakeElf({ symbols: [{ name: '__isoc23_sscanf', version: 'GLIBC_2.38' }, { name: 'c23_sscanf' }], needs: [LIBC([['GLIBC_2.38', 2]])] }), [rt('__isoc23_sscanf', 'GLIBC_2.38', '__isoc99_sscanf', 'GLIBC_2.38')]),
    /would change the name of symbol 2/,
  );
  refuses(() => retargetImports(fakeElf({ symbols: [{ name: 'ab', version: 'V1' }], needs: [LIBC([['V1', 2]])] }), [rt('ab', 'V1', 'abc', 'V1')]), /no room for abc/);
  // GLIBC_2.38 is also used by `other`, so it cannot become GLIBC_2.7.
  refuses(
    () => retargetImports(fakeElf({ symbols: [{ name: '__isoc23_sscanf', version: 'GLIBC_2.38' }, { name: 'other', version: 'GLIBC_2.38' }], needs: [LIBC([['GLIBC_2.38', 2]])] }), [rt('__isoc23_sscanf', 'GLIBC_2.38', '__isoc99_sscanf', 'GLIBC_2.7')]),
    /GLIBC_2.38 is shared/,
  );
  refuses(() => retargetImports(fakeElf({ symbols: [{ name: 'f', version: 'V1' }], needs: [LIBC([['V1', 2], ['V2', 3]])], hashedFrom: 1 }), [rt('f', 'V1', 'f', 'V2')]), /in the GNU hash table/);
  refuses(() => retargetImports(fakeElf({ symbols: [{ name: 'f', version: 'V1', defined: true }], needs: [LIBC([['V1', 2], ['V2', 3]])] }), [rt('f', 'V1', 'f', 'V2')]), /no import f@V1/);
  refuses(() => retargetImports(fakeElf({ symbols: [{ name: 'f', version: 'V1' }], needs: [LIBC([['V1', 2]])] }), [rt('g', 'V1', 'f', 'V1')]), /no import g@V1/);
  refuses(() => readImports(fakeElf({ symbols: [], needs: [], sysvHash: true })), /SysV .hash/);
  refuses(() => readImports(Buffer.from('#!/bin/sh\necho not an ELF file at all, just text of some length to pass 64 bytes\n')), /not an ELF file/);
  const elf32 = fakeElf({ symbols: [], needs: [] });
  elf32[4] = 1;
  refuses(() => readImports(elf32), /not a 64-bit/);
  const bigEndian = fakeElf({ symbols: [], needs: [] });
  bigEndian[5] = 2;
  refuses(() => readImports(bigEndian), /not a little-endian/);
  refuses(() => readImports(fakeElf({ symbols: [], needs: [] }).subarray(0, 200)), /out of bounds/);
});

test('the pinned uWS binary: only its three C23 imports change, and only in the dynamic-linking sections', () => {
  const pkg = installedPackage();
  const file = 'uws_linux_x64_115.node';
  const input = readFileSync(join(pkg.dir, file));
  const before = readImports(input);
  assert.deepEqual(
    before.filter((i) => i.version === 'GLIBC_2.38').map((i) => i.name).sort(),
    ['__isoc23_sscanf', '__isoc23_strtol', '__isoc23_strtoul'],
  );
  const out = retargetImports(input, PINNED[file]!.retargets);
  const after = readImports(out);
  assert.equal(after.length, before.length);
  const expected: Record<string, string> = { __isoc23_sscanf: '__isoc99_sscanf@GLIBC_2.7', __isoc23_strtol: 'strtol@GLIBC_2.2.5', __isoc23_strtoul: 'strtoul@GLIBC_2.2.5' };
  before.forEach((b, k) => {
    const a = after[k]!;
    assert.equal(a.index, b.index);
    assert.equal(`${a.name}@${a.version}`, expected[b.name] ?? `${b.name}@${b.version}`, b.name);
    assert.equal(a.file, b.file);
  });
  assert.ok(!readNeeds(out).some((n) => n.name === 'GLIBC_2.38'));

  // Every differing byte lies in .dynstr, .dynsym, .gnu.version or .gnu.version_r.
  const shoff = Number(input.readBigUInt64LE(0x28));
  const ranges: [number, number][] = [];
  for (let i = 0; i < input.readUInt16LE(0x3c); i++) {
    const h = shoff + i * input.readUInt16LE(0x3a);
    if ([3, 11, 0x6fffffff, 0x6ffffffe].includes(input.readUInt32LE(h + 4)) && input.readUInt32LE(h + 8) & 2 /* SHF_ALLOC */) {
      const off = Number(input.readBigUInt64LE(h + 24));
      ranges.push([off, off + Number(input.readBigUInt64LE(h + 32))]);
    }
  }
  let changed = 0;
  for (let i = 0; i < input.length; i++) {
    if (input[i] === out[i]) continue;
    changed++;
    assert.ok(ranges.some(([a, b]) => i >= a && i < b), `byte ${i} changed outside the dynamic sections`);
  }
  assert.ok(changed > 0 && changed < 64, `${changed} bytes changed`);
});
