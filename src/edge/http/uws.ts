/**
 * Loads the uWebSockets.js build the edge runs on. The only module that loads uWS; server.ts asks it once.
 *
 * Why not `import 'uWebSockets.js'`: the build we need (@btc-vision/uwebsockets.js 20.56.0, upstream
 * uWebSockets with the header-name fix of v20.61, "A field name is really a token") passes header names
 * such as `SVC_API_KEY` and `POLY_SIGNATURE` through, which the spec and the platform's client send; older
 * registry builds drop those requests unanswered. Its Linux binaries are linked against glibc 2.38 and
 * import three C23 entry points that glibc 2.36 (Debian 12) lacks. So:
 *   - glibc >= 2.38, or not Linux/glibc: the published binary is loaded as it is;
 *   - older glibc on Linux x64: a compatible copy of that exact binary, pinned by SHA-256, with those three
 *     imports retargeted to their C99 equivalents (elf-imports.ts) is written once to a cache directory
 *     and loaded; the copy's own SHA-256 is pinned too, so what loads is exactly what was tested. Any other
 *     input is refused with a message saying why. Nothing is compiled and nothing is committed.
 * docs/decisions/authentication.md ("Which uWebSockets.js build") records the choice and the alternatives.
 *
 * UWS_HTTP_MAX_HEADERS_SIZE is read by uWS once, when the binary loads: the first call sets it from
 * `maxHeaderBytes`; a later call asking for another bound is refused rather than silently ignored.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type * as UwsModule from 'uWebSockets.js';
import { retargetImports, type Retarget } from './elf-imports.ts';

export type Uws = typeof UwsModule;

/** How the running build was chosen; logged at start. */
export interface UwsBuild {
  readonly package: string;
  readonly binary: string;
  /** `given`: a module the caller passed in (benches comparing builds). */
  readonly source: 'published' | 'compatible copy' | 'given';
  readonly path: string;
  readonly glibc: string | undefined;
  readonly reason: string;
}

const require = createRequire(import.meta.url);

/** The first glibc that exports the C23 entry points the published Linux binaries import. */
const GLIBC_WITH_C23 = [2, 38] as const;

const X64_C99: readonly Retarget[] = [
  { from: { name: '__isoc23_strtol', version: 'GLIBC_2.38' }, to: { name: 'strtol', version: 'GLIBC_2.2.5' } },
  { from: { name: '__isoc23_strtoul', version: 'GLIBC_2.38' }, to: { name: 'strtoul', version: 'GLIBC_2.2.5' } },
  { from: { name: '__isoc23_sscanf', version: 'GLIBC_2.38' }, to: { name: '__isoc99_sscanf', version: 'GLIBC_2.7' } },
];

export interface PinnedBinary {
  readonly sha256: string;
  readonly retargets: readonly Retarget[];
  /** SHA-256 of the compatible copy: retargeting is deterministic, so the output is pinned as well. */
  readonly copySha256: string;
}

/** The binaries of the pinned package that have a tested compatible copy, by file name. */
export const PINNED_PACKAGE = '@btc-vision/uwebsockets.js@20.56.0';
export const PINNED: Readonly<Record<string, PinnedBinary>> = {
  'uws_linux_x64_115.node': {
    sha256: '3c4cfd4f4673c591dbca82cdda94f7e0ad9bc298966c39a7bd259838c2b25d4f',
    retargets: X64_C99,
    copySha256: '58de154431d2bb908703cb11f26e3d50ba4f6a7416d21a87c9ba1e9e857b20af',
  },
  'uws_linux_x64_127.node': {
    sha256: '0e0af5d0e486b67e25dd5c6686f8f05be4504629404d5c1972c808ab5d8e4cc2',
    retargets: X64_C99,
    copySha256: '19a5195671c4b0cf2079e06822f9124a63bd99926ab4d202c1b33b0a1f1f1095',
  },
  'uws_linux_x64_137.node': {
    sha256: '9aa8b857ac4ab0bfb1245e948eeeacc904b13a3608c9a281d551c43c66bea66e',
    retargets: X64_C99,
    copySha256: 'acb2fbe8cb83257249ad66a0fe06f9a13b654ead209c71fc7b3789dcedd8c0d6',
  },
  'uws_linux_x64_141.node': {
    sha256: '0958d6d6dd863240494539d02a34d41de24a2d7c1552c4a41efb3744ec56298e',
    retargets: X64_C99,
    copySha256: '89ff91d0dd9b665e92ef54041d67e1be730a454bc969bc32aa317b7ca9ebff75',
  },
};

export class UwsLoadError extends Error {
  override readonly name = 'UwsLoadError';
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The installed package's directory, version and the binary file name for this platform and Node ABI. */
export function installedPackage(): { dir: string; spec: string; binary: string } {
  const dir = dirname(require.resolve('uWebSockets.js'));
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; version: string };
  return { dir, spec: `${pkg.name}@${pkg.version}`, binary: `uws_${process.platform}_${process.arch}_${process.versions.modules}.node` };
}

/** The glibc this process runs on, or undefined (musl, macOS, Windows). */
export function runtimeGlibc(): string | undefined {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return header?.glibcVersionRuntime;
}

export function glibcAtLeast(version: string, min: readonly [number, number]): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > min[0] || (major === min[0] && minor >= min[1]);
}

/**
 * Writes (once) and returns the path of the compatible copy of `source`. Refuses any input whose hash is
 * not the pinned one, and any output whose hash differs from the pinned copy. Concurrent first starts
 * are safe: each writes a private temporary file and renames it into place.
 */
export function compatibleCopy(source: string, pin: PinnedBinary, cacheDir: string, fileName: string): string {
  const target = join(cacheDir, `${fileName.replace(/\.node$/, '')}-${pin.copySha256.slice(0, 16)}.node`);
  if (existsSync(target) && sha256(readFileSync(target)) === pin.copySha256) return target;
  const input = readFileSync(source);
  const got = sha256(input);
  if (got !== pin.sha256) {
    throw new UwsLoadError(`refusing to prepare a compatible copy of ${source}: its SHA-256 is ${got}, the pinned ${fileName} is ${pin.sha256}`);
  }
  const copy = retargetImports(input, pin.retargets);
  const out = sha256(copy);
  if (out !== pin.copySha256) throw new UwsLoadError(`the compatible copy of ${fileName} came out as ${out}, expected ${pin.copySha256}`);
  mkdirSync(cacheDir, { recursive: true });
  const tmp = `${target}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, copy, { mode: 0o755 });
  renameSync(tmp, target);
  return target;
}

/** Where compatible copies live: node_modules/.cache (the usual place for derived files), else the temp dir. */
export function defaultCacheDir(pkgDir: string): string {
  const nodeModules = dirname(pkgDir);
  const candidate = join(nodeModules, '.cache', 'pm-exchange-uws');
  try {
    mkdirSync(candidate, { recursive: true });
    return candidate;
  } catch {
    return join(tmpdir(), `pm-exchange-uws-${process.getuid?.() ?? 'user'}`);
  }
}

export interface ChooseInput {
  platform: NodeJS.Platform;
  glibc: string | undefined;
  binary: string;
}

/** Published binary or compatible copy, and why: pure, so the rule is tested without loading anything. */
export function chooseSource(i: ChooseInput): { source: 'published' | 'compatible copy'; reason: string } {
  if (i.platform !== 'linux' || i.glibc === undefined) return { source: 'published', reason: 'not Linux with glibc: the published binary has no glibc imports to satisfy' };
  if (glibcAtLeast(i.glibc, GLIBC_WITH_C23)) return { source: 'published', reason: `glibc ${i.glibc} has the C23 entry points the published binary imports` };
  if (!PINNED[i.binary]) {
    throw new UwsLoadError(`glibc ${i.glibc} lacks the C23 entry points ${i.binary} imports and no compatible copy of it is pinned (${PINNED_PACKAGE} copies exist for Linux x64 on Node 20, 22, 24 and 25); run on glibc 2.38 or newer`);
  }
  return { source: 'compatible copy', reason: `glibc ${i.glibc} lacks __isoc23_sscanf/strtol/strtoul (glibc 2.38): loading a copy retargeted to their C99 equivalents` };
}

let loaded: { uws: Uws; build: UwsBuild; maxHeaderBytes: number } | undefined;

/** The uWS module and how it was chosen; loads it on the first call. */
export function loadUws(maxHeaderBytes: number): { uws: Uws; build: UwsBuild } {
  if (loaded) {
    if (loaded.maxHeaderBytes !== maxHeaderBytes) {
      throw new UwsLoadError(`uWS was loaded with a ${loaded.maxHeaderBytes}-byte header bound; it reads the bound once, so ${maxHeaderBytes} cannot apply in this process`);
    }
    return loaded;
  }
  const pkg = installedPackage();
  const glibc = runtimeGlibc();
  const { source, reason } = chooseSource({ platform: process.platform, glibc, binary: pkg.binary });
  const published = join(pkg.dir, pkg.binary);
  const path = source === 'published' ? published : compatibleCopy(published, PINNED[pkg.binary]!, process.env.UWS_CACHE_DIR || defaultCacheDir(pkg.dir), pkg.binary);
  process.env.UWS_HTTP_MAX_HEADERS_SIZE = String(maxHeaderBytes);
  const uws = require(path) as Uws;
  loaded = { uws, build: { package: pkg.spec, binary: pkg.binary, source, path, glibc, reason }, maxHeaderBytes };
  return loaded;
}
