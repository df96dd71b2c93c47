/**
 * Reads and retargets the versioned imports of an ELF64 little-endian shared object: the dynamic symbol
 * table (.dynsym), its string table (.dynstr), the symbol versions (.gnu.version) and the version needs
 * (.gnu.version_r). Nothing else of the file is read or written, and nothing is ever moved or grown: a
 * retarget rewrites fields in place, so every offset, address and relocation stays valid.
 *
 * Why it exists: the uWebSockets.js build that parses header names correctly is linked against glibc 2.38
 * and imports three C23 entry points (`__isoc23_sscanf`, `__isoc23_strtol`, `__isoc23_strtoul`) that older
 * glibc lacks. They differ from `__isoc99_sscanf`, `strtol` and `strtoul` only in also accepting a `0b`
 * prefix, so pointing those imports at the older names lets the same machine code load on glibc 2.36
 * (docs/decisions/authentication.md, "Which uWebSockets.js build"). edge/http/uws.ts decides when to use it.
 *
 * What a retarget {from: S@V, to: T@V'} does, for every undefined dynamic symbol named S with version V:
 *   - its name becomes T: the offset of an existing `T\0` in .dynstr (a suffix of a longer string counts),
 *     else S's own string is overwritten in place when T is no longer than S and every other reference
 *     into those bytes (symbol, version and DT_NEEDED names) still reads the same string afterwards;
 *   - its version becomes V': the version index of an existing need for V' from the same file, else the
 *     need for V itself is renamed to V' (name and ELF hash) when only retargeted symbols use it;
 *   - a need left without users is unlinked from its file's list (the loader checks every listed need).
 * Anything else (a symbol that is defined, a name that does not fit, a shared need) is refused with an
 * ElfError; the input buffer is never modified.
 *
 * Limits: ELF64 little-endian only; objects with a SysV `.hash` section are refused (it hashes every
 * symbol, so a rename could break lookups); a renamed symbol must lie below the GNU hash table's
 * `symoffset` (undefined symbols do: the linker puts them first), so no hash chain is touched.
 */

export class ElfError extends Error {
  override readonly name = 'ElfError';
}

export interface ElfImport {
  /** Index in .dynsym. */
  readonly index: number;
  readonly name: string;
  /** Version name (e.g. `GLIBC_2.38`), or undefined for an unversioned import. */
  readonly version: string | undefined;
  /** The needed file that version belongs to (e.g. `libc.so.6`). */
  readonly file: string | undefined;
}

export interface SymbolVersion {
  readonly name: string;
  readonly version: string;
}

export interface Retarget {
  readonly from: SymbolVersion;
  readonly to: SymbolVersion;
}

const SHT_HASH = 5;
const SHT_DYNAMIC = 6;
const SHT_DYNSYM = 11;
const SHT_GNU_HASH = 0x6ffffff6;
const SHT_GNU_VERDEF = 0x6ffffffd;
const SHT_GNU_VERNEED = 0x6ffffffe;
const SHT_GNU_VERSYM = 0x6fffffff;
const SHN_UNDEF = 0;
const SYM_SIZE = 24;
const VERNEED_SIZE = 16;
const VERNAUX_SIZE = 16;
const VERSYM_HIDDEN = 0x8000;
/** Dynamic tags whose value is a .dynstr offset. */
const DT_STRING_TAGS = new Set([1 /* NEEDED */, 14 /* SONAME */, 15 /* RPATH */, 29 /* RUNPATH */]);

interface Section {
  type: number;
  offset: number;
  size: number;
  link: number;
  info: number;
  entsize: number;
}

/** One version need (a Vernaux) as it sits in the file. */
interface Need {
  /** File offset of the Vernaux. */
  at: number;
  /** File offset of the owning Verneed. */
  owner: number;
  file: string;
  name: string;
  index: number;
}

/** The parts of one shared object this module reads, located once. */
class DynamicView {
  readonly dynstr: Section;
  readonly dynsym: Section;
  readonly versym: Section;
  readonly verneed: Section;
  readonly symCount: number;
  /** First hashed symbol of the GNU hash table (symbols below it are not in any chain). */
  readonly hashedFrom: number;
  readonly sections: Section[];

  constructor(readonly buf: Buffer) {
    if (buf.length < 64 || buf.readUInt32BE(0) !== 0x7f454c46) throw new ElfError('not an ELF file');
    if (buf[4] !== 2) throw new ElfError('not a 64-bit ELF file');
    if (buf[5] !== 1) throw new ElfError('not a little-endian ELF file');
    const shoff = this.u64(0x28);
    const shentsize = buf.readUInt16LE(0x3a);
    const shnum = buf.readUInt16LE(0x3c);
    if (shoff === 0 || shnum === 0 || shentsize < 64 || shoff + shnum * shentsize > buf.length) {
      throw new ElfError('section header table missing or out of bounds');
    }
    this.sections = [];
    for (let i = 0; i < shnum; i++) {
      const h = shoff + i * shentsize;
      const s: Section = {
        type: buf.readUInt32LE(h + 4),
        offset: this.u64(h + 24),
        size: this.u64(h + 32),
        link: buf.readUInt32LE(h + 40),
        info: buf.readUInt32LE(h + 44),
        entsize: this.u64(h + 56),
      };
      if (s.type !== 8 /* NOBITS */ && s.offset + s.size > buf.length) throw new ElfError(`section ${i} out of bounds`);
      this.sections.push(s);
    }
    const one = (type: number, what: string): Section => {
      const found = this.sections.filter((s) => s.type === type);
      if (found.length !== 1) throw new ElfError(`expected one ${what} section, found ${found.length}`);
      return found[0]!;
    };
    if (this.sections.some((s) => s.type === SHT_HASH)) throw new ElfError('a SysV .hash section is present: renaming symbols is not supported');
    this.dynsym = one(SHT_DYNSYM, '.dynsym');
    const strtab = this.sections[this.dynsym.link];
    if (!strtab || strtab.type !== 3 /* STRTAB */) throw new ElfError('.dynsym does not link to a string table');
    this.dynstr = strtab;
    this.versym = one(SHT_GNU_VERSYM, '.gnu.version');
    this.verneed = one(SHT_GNU_VERNEED, '.gnu.version_r');
    if (this.dynsym.entsize !== SYM_SIZE) throw new ElfError('unexpected .dynsym entry size');
    this.symCount = this.dynsym.size / SYM_SIZE;
    if (this.versym.size !== this.symCount * 2) throw new ElfError('.gnu.version does not match .dynsym');
    const gnuHash = this.sections.find((s) => s.type === SHT_GNU_HASH);
    this.hashedFrom = gnuHash ? buf.readUInt32LE(gnuHash.offset + 4) : this.symCount;
  }

  u64(at: number): number {
    const v = this.buf.readBigUInt64LE(at);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new ElfError('offset beyond 2^53');
    return Number(v);
  }

  str(off: number): string {
    const start = this.dynstr.offset + off;
    const end = this.buf.indexOf(0, start);
    if (off >= this.dynstr.size || end < 0 || end >= this.dynstr.offset + this.dynstr.size) throw new ElfError(`string offset ${off} out of .dynstr`);
    return this.buf.toString('latin1', start, end);
  }

  symAt(i: number): number {
    return this.dynsym.offset + i * SYM_SIZE;
  }

  versionIndex(i: number): number {
    return this.buf.readUInt16LE(this.versym.offset + i * 2) & ~VERSYM_HIDDEN;
  }

  needs(): Need[] {
    const out: Need[] = [];
    const b = this.buf;
    let vn = this.verneed.offset;
    const end = this.verneed.offset + this.verneed.size;
    // sh_info of .gnu.version_r is the number of files (DT_VERNEEDNUM).
    for (let k = 0; k < this.verneed.info; k++) {
      if (vn + VERNEED_SIZE > end) throw new ElfError('.gnu.version_r out of bounds');
      const cnt = b.readUInt16LE(vn + 2);
      const file = this.str(b.readUInt32LE(vn + 4));
      let aux = vn + b.readUInt32LE(vn + 8);
      for (let j = 0; j < cnt; j++) {
        if (aux + VERNAUX_SIZE > end) throw new ElfError('.gnu.version_r auxiliary entry out of bounds');
        out.push({ at: aux, owner: vn, file, name: this.str(b.readUInt32LE(aux + 8)), index: b.readUInt16LE(aux + 6) });
        const next = b.readUInt32LE(aux + 12);
        if (next === 0) break;
        aux += next;
      }
      const next = b.readUInt32LE(vn + 12);
      if (next === 0) break;
      vn += next;
    }
    return out;
  }

  /** Every .dynstr offset something in the dynamic linking data refers to, with what refers to it. */
  stringRefs(): Array<{ off: number; where: string }> {
    const b = this.buf;
    const refs: Array<{ off: number; where: string }> = [];
    for (let i = 1; i < this.symCount; i++) refs.push({ off: b.readUInt32LE(this.symAt(i)), where: `symbol ${i}` });
    for (const n of this.needs()) {
      refs.push({ off: b.readUInt32LE(n.at + 8), where: `version need ${n.name}` });
      refs.push({ off: b.readUInt32LE(n.owner + 4), where: `needed file ${n.file}` });
    }
    for (const s of this.sections) {
      if (s.type === SHT_GNU_VERDEF && s.link === this.sections.indexOf(this.dynstr)) {
        let vd = s.offset;
        for (let k = 0; k < s.info; k++) {
          const cnt = b.readUInt16LE(vd + 6);
          let aux = vd + b.readUInt32LE(vd + 12);
          for (let j = 0; j < cnt; j++) {
            refs.push({ off: b.readUInt32LE(aux), where: 'version definition' });
            aux += b.readUInt32LE(aux + 4);
          }
          const next = b.readUInt32LE(vd + 16);
          if (next === 0) break;
          vd += next;
        }
      }
      if (s.type === SHT_DYNAMIC) {
        for (let at = s.offset; at + 16 <= s.offset + s.size; at += 16) {
          const tag = this.u64(at);
          if (tag === 0) break;
          if (DT_STRING_TAGS.has(tag)) refs.push({ off: this.u64(at + 8), where: `dynamic tag ${tag}` });
        }
      }
    }
    return refs;
  }
}

/** The undefined (imported) symbols of a shared object with their versions. */
export function readImports(buf: Buffer): ElfImport[] {
  const v = new DynamicView(buf);
  const byIndex = new Map(v.needs().map((n) => [n.index, n]));
  const out: ElfImport[] = [];
  for (let i = 1; i < v.symCount; i++) {
    const at = v.symAt(i);
    if (buf.readUInt16LE(at + 6) !== SHN_UNDEF) continue;
    const need = byIndex.get(v.versionIndex(i));
    out.push({ index: i, name: v.str(buf.readUInt32LE(at)), version: need?.name, file: need?.file });
  }
  return out;
}

/** The version needs (file, version name, version index, stored hash), in the order the loader walks them. */
export function readNeeds(buf: Buffer): Array<{ file: string; name: string; index: number; hash: number }> {
  return new DynamicView(buf).needs().map((n) => ({ file: n.file, name: n.name, index: n.index, hash: buf.readUInt32LE(n.at) }));
}

/** The classic ELF hash of a version name (what Vernaux.vna_hash holds). */
export function elfHash(name: string): number {
  let h = 0;
  for (let i = 0; i < name.length; i++) {
    h = ((h << 4) + name.charCodeAt(i)) >>> 0;
    const g = h & 0xf0000000;
    if (g !== 0) h ^= g >>> 24;
    h &= ~g >>> 0;
  }
  return h >>> 0;
}

/**
 * Returns a copy of `input` with the imports retargeted as the header describes. Throws ElfError when any
 * retarget cannot be done in place; the input is never modified.
 */
export function retargetImports(input: Buffer, retargets: readonly Retarget[]): Buffer {
  const buf = Buffer.from(input);
  const v = new DynamicView(buf);
  const imports = readImports(buf);
  const needs = v.needs();
  const plan: Array<{ imp: ElfImport; to: SymbolVersion; need: Need }> = [];
  for (const r of retargets) {
    const hits = imports.filter((i) => i.name === r.from.name && i.version === r.from.version);
    if (hits.length === 0) throw new ElfError(`no import ${r.from.name}@${r.from.version}`);
    for (const imp of hits) {
      if (imp.index >= v.hashedFrom) throw new ElfError(`${imp.name} is in the GNU hash table`);
      const need = needs.find((n) => n.index === v.versionIndex(imp.index))!;
      plan.push({ imp, to: r.to, need });
    }
  }

  // Versions first: the index each retargeted symbol will carry.
  const users = new Map<number, number>();
  for (let i = 1; i < v.symCount; i++) users.set(v.versionIndex(i), (users.get(v.versionIndex(i)) ?? 0) + 1);
  const renamedNeeds = new Map<number, string>();
  const targetIndex = (p: (typeof plan)[number]): number => {
    const same = needs.find((n) => n.owner === p.need.owner && n.name === p.to.version);
    if (same) return same.index;
    const renamed = renamedNeeds.get(p.need.index);
    if (renamed === p.to.version) return p.need.index;
    const movedAway = plan.filter((q) => q.need.index === p.need.index).length;
    if (renamed !== undefined || movedAway !== users.get(p.need.index)) {
      throw new ElfError(`cannot give ${p.imp.name} version ${p.to.version}: no such need from ${p.need.file}, and ${p.need.name} is shared`);
    }
    renamedNeeds.set(p.need.index, p.to.version);
    return p.need.index;
  };
  const indexOf = plan.map(targetIndex);

  const refs = v.stringRefs();
  plan.forEach((p, k) => {
    const at = v.symAt(p.imp.index);
    buf.writeUInt32LE(nameOffset(v, refs, buf.readUInt32LE(at), p.to.name), at);
    const vs = v.versym.offset + p.imp.index * 2;
    buf.writeUInt16LE((buf.readUInt16LE(vs) & VERSYM_HIDDEN) | indexOf[k]!, vs);
  });
  for (const [index, version] of renamedNeeds) {
    const need = needs.find((n) => n.index === index)!;
    buf.writeUInt32LE(nameOffset(v, v.stringRefs(), buf.readUInt32LE(need.at + 8), version), need.at + 8);
    buf.writeUInt32LE(elfHash(version), need.at);
  }

  // A need no symbol uses any more is unlinked: the loader would still insist on it.
  const stillUsed = new Set<number>();
  for (let i = 1; i < v.symCount; i++) stillUsed.add(v.versionIndex(i));
  const emptied = new Map(plan.filter((p) => !stillUsed.has(p.need.index) && !renamedNeeds.has(p.need.index)).map((p) => [p.need.index, p.need]));
  for (const need of emptied.values()) unlinkNeed(buf, need);
  return buf;
}

/**
 * The .dynstr offset of `name`: an existing occurrence (as a whole string or the tail of a longer one),
 * else `current` overwritten in place when that changes no other reference's string.
 */
function nameOffset(v: DynamicView, refs: Array<{ off: number; where: string }>, current: number, name: string): number {
  const b = v.buf;
  const table = b.subarray(v.dynstr.offset, v.dynstr.offset + v.dynstr.size);
  const wanted = Buffer.from(`${name}\0`, 'latin1');
  for (let from = table.indexOf(wanted); from >= 0; from = table.indexOf(wanted, from + 1)) return from;
  const old = v.str(current);
  if (name.length > old.length) throw new ElfError(`no room for ${name} in .dynstr`);
  const next = Buffer.alloc(old.length + 1);
  next.write(name, 'latin1');
  const start = v.dynstr.offset + current;
  const readsFrom = (bytes: Buffer, at: number) => bytes.subarray(at, bytes.indexOf(0, at));
  for (const r of refs) {
    if (r.off <= current || r.off > current + old.length) continue;
    const before = readsFrom(b.subarray(start, start + old.length + 1), r.off - current);
    const after = readsFrom(next, r.off - current);
    if (!before.equals(after)) throw new ElfError(`renaming ${old} to ${name} would change the name of ${r.where}`);
  }
  next.copy(b, start);
  return current;
}

/** Removes one Vernaux from its Verneed's list (count and links), leaving its bytes unreferenced. */
function unlinkNeed(b: Buffer, need: Need): void {
  const cnt = b.readUInt16LE(need.owner + 2);
  let prev = -1;
  let aux = need.owner + b.readUInt32LE(need.owner + 8);
  for (let k = 0; k < cnt && aux !== need.at; k++) {
    prev = aux;
    aux += b.readUInt32LE(aux + 12);
  }
  if (aux !== need.at) throw new ElfError(`version need ${need.name} not found in its list`);
  const next = b.readUInt32LE(aux + 12);
  if (prev < 0) {
    // First of the list: the Verneed points past it (or, if it was the only one, the count becomes 0).
    b.writeUInt32LE(next === 0 ? b.readUInt32LE(need.owner + 8) : b.readUInt32LE(need.owner + 8) + next, need.owner + 8);
  } else {
    b.writeUInt32LE(next === 0 ? 0 : b.readUInt32LE(prev + 12) + next, prev + 12);
  }
  b.writeUInt16LE(cnt - 1, need.owner + 2);
}
