/**
 * Configuration, in layers, each overlaying the one before key by key (objects merge, arrays and scalars
 * replace):
 *
 *   1. `config/default.json`;
 *   2. the profile's files (PROFILES): `spec` (the default) has none, `clob-v2` and `platform` are what the
 *      platform's official client and bots expect (its shapes, the platform's domains, trades that settle
 *      MATCHED -> MINED -> CONFIRMED, reasons in the error text);
 *   3. the files CONFIG_FILE names, in order (several separated by ',' or ':');
 *   4. environment variables.
 *
 * The profile is PROFILE, else the one a CONFIG_FILE names in its `profile` key (a profile's own file names
 * it: `CONFIG_FILE=config/clob-v2-compat.json` is `PROFILE=clob-v2`), else `spec`. A file that names another
 * profile than the one selected is an error: two profiles do not stack, files do. The merged result is
 * validated against `ConfigSchema` (config-schema.ts, with PROFILES) and frozen; a bad value stops start-up with a message naming the key
 * (`ConfigError`).
 *
 * Environment variables: PROFILE, CONFIG_FILE, HOST, PORT, DATA_DIR, ADMIN_TOKEN, DEMO (live/static/off),
 * LOG_LEVEL, SHARDS, RATE_LIMITS (off/on), MAX_BODY_BYTES, MAX_HEADER_BYTES, FAULTS_FILE,
 * TEST_CONTROLS (on/off/auto), CONSOLE (on/off), ROLE, NATS_URL, NATS_USER, NATS_PASSWORD, NATS_CA_FILE, FAILOVER, PUBLIC_URL, SEQUENCER_URL.
 */
import { readFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { compileIpList } from '../domain/ip.ts';
import { DEFAULT_BUCKETS } from '../domain/rate-limits.ts';
import { ConfigSchema, PROFILES, PROFILE_NAMES, isProfile, type ProfileName } from './config-schema.ts';

export type Config = Static<typeof ConfigSchema>;

const checkConfig = TypeCompiler.Compile(ConfigSchema);

export class ConfigError extends Error {
  constructor(readonly key: string, detail: string) {
    super(`invalid configuration: ${key}: ${detail}`);
    this.name = 'ConfigError';
  }
}

const here = dirname(fileURLToPath(import.meta.url));
/** This package's config/ directory: default.json and the profiles' files. */
export const CONFIG_DIR = resolve(here, '../../config');
export const DEFAULT_CONFIG_PATH = join(CONFIG_DIR, 'default.json');
/** Where `npm run build:console` (tools/build-console.ts) writes the web console, and where `console.dir: ""` serves it from. */
export const CONSOLE_BUILD_DIR = resolve(here, '../../dist/console');

/** The directory the web console is served from. */
export function consoleDir(config: Pick<Config, 'console'>): string {
  return config.console.dir === '' ? CONSOLE_BUILD_DIR : resolve(config.console.dir);
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Objects merge key by key; arrays and scalars replace. */
function overlay(base: Json, top: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(top)) out[k] = isObject(v) && isObject(out[k]) ? overlay(out[k] as Json, v) : v;
  return out;
}

function readJson(path: string, key: string): Json {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(key, `cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    const v: unknown = JSON.parse(text);
    if (!isObject(v)) throw new Error('not a JSON object');
    return v;
  } catch (e) {
    throw new ConfigError(key, `${path} is not a JSON object: ${(e as Error).message}`);
  }
}

function envBool(key: string, v: string): boolean {
  if (/^(1|true|on|yes)$/i.test(v)) return true;
  if (/^(0|false|off|no)$/i.test(v)) return false;
  throw new ConfigError(key, `expected 0/1/true/false, got ${JSON.stringify(v)}`);
}

export type DemoMode = Config['demo'];

/** DEMO: 1/true/on/live, static, 0/false/off (the first and last forms are the boolean it used to be). */
function envDemo(v: string): DemoMode {
  if (/^(1|true|on|yes|live)$/i.test(v)) return 'live';
  if (/^static$/i.test(v)) return 'static';
  if (/^(0|false|off|no)$/i.test(v)) return 'off';
  throw new ConfigError('DEMO', `expected live, static or off (or 1/0), got ${JSON.stringify(v)}`);
}

/** TEST_CONTROLS: on/off (or 1/0), auto. */
function envTestControls(v: string): Config['sandbox']['testControls'] {
  if (/^auto$/i.test(v)) return 'auto';
  return envBool('TEST_CONTROLS', v) ? 'on' : 'off';
}

/** Whether the sandbox's test controls run on this node (`sandbox.testControls`; auto: only ROLE=single). */
export function testControlsOn(config: Pick<Config, 'sandbox' | 'cluster'>): boolean {
  const c = config.sandbox.testControls;
  return c === 'on' || (c === 'auto' && config.cluster.role === 'single');
}

function envInt(key: string, v: string): number {
  if (!/^-?\d+$/.test(v)) throw new ConfigError(key, `expected an integer, got ${JSON.stringify(v)}`);
  return Number(v);
}

/** Environment variables as an overlay object (only the variables that are set). */
function envOverlay(env: NodeJS.ProcessEnv): Json {
  const o: Json = {};
  const http: Json = {};
  if (env.HOST !== undefined) http.host = env.HOST;
  if (env.PORT !== undefined) http.port = envInt('PORT', env.PORT);
  if (env.MAX_BODY_BYTES !== undefined) http.maxBodyBytes = envInt('MAX_BODY_BYTES', env.MAX_BODY_BYTES);
  if (env.MAX_HEADER_BYTES !== undefined) http.maxHeaderBytes = envInt('MAX_HEADER_BYTES', env.MAX_HEADER_BYTES);
  if (Object.keys(http).length) o.http = http;
  if (env.DATA_DIR !== undefined) o.dataDir = env.DATA_DIR;
  if (env.ADMIN_TOKEN !== undefined) o.adminToken = env.ADMIN_TOKEN;
  if (env.DEMO !== undefined) o.demo = envDemo(env.DEMO);
  if (env.LOG_LEVEL !== undefined) o.log = { level: env.LOG_LEVEL };
  if (env.SHARDS !== undefined) o.engine = { shards: envInt('SHARDS', env.SHARDS) };
  if (env.RATE_LIMITS !== undefined) o.rateLimits = { enabled: envBool('RATE_LIMITS', env.RATE_LIMITS) };
  const sandbox: Json = {};
  if (env.FAULTS_FILE !== undefined) sandbox.faultsFile = env.FAULTS_FILE;
  if (env.TEST_CONTROLS !== undefined) sandbox.testControls = envTestControls(env.TEST_CONTROLS);
  if (env.STATE_FILE !== undefined) sandbox.state = env.STATE_FILE;
  if (Object.keys(sandbox).length) o.sandbox = sandbox;
  if (env.CONSOLE !== undefined) o.console = { enabled: envBool('CONSOLE', env.CONSOLE) };
  if (env.PROFILE !== undefined) o.profile = env.PROFILE;
  const cluster: Json = {};
  if (env.ROLE !== undefined) cluster.role = env.ROLE;
  if (env.NATS_URL !== undefined) cluster.natsUrl = env.NATS_URL;
  if (env.NATS_USER !== undefined) cluster.natsUser = env.NATS_USER;
  if (env.NATS_PASSWORD !== undefined) cluster.natsPassword = env.NATS_PASSWORD;
  if (env.NATS_CA_FILE !== undefined) cluster.natsCaFile = env.NATS_CA_FILE;
  if (env.NATS_INSECURE !== undefined) cluster.insecure = envBool('NATS_INSECURE', env.NATS_INSECURE);
  const failover: Json = {};
  if (env.FAILOVER !== undefined) failover.enabled = env.FAILOVER === '1' || env.FAILOVER === 'true';
  if (env.PUBLIC_URL !== undefined) failover.nodeUrl = env.PUBLIC_URL;
  if (Object.keys(failover).length) cluster.failover = failover;
  if (env.SEQUENCER_URL !== undefined) cluster.sequencerUrl = env.SEQUENCER_URL;
  if (env.FOLLOWER_START !== undefined) cluster.followerStart = env.FOLLOWER_START;
  if (Object.keys(cluster).length) o.cluster = cluster;
  return o;
}

/** '/http/port' -> 'http.port' */
const keyOf = (path: string) => path.replace(/^\//, '').replace(/\//g, '.') || '(root)';

function firstError(value: unknown): ConfigError | undefined {
  const err = checkConfig.Errors(value).First();
  if (!err) return undefined;
  const key = keyOf(err.path);
  const got = err.value === undefined ? 'missing' : `got ${JSON.stringify(err.value)}`;
  return new ConfigError(key, `${err.message} (${got})`);
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  defaultPath?: string;
}

/** The files CONFIG_FILE names, in order: separated by ',' or the path-list separator (':'). */
export function configFiles(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .flatMap((part) => part.split(delimiter))
    .map((f) => f.trim())
    .filter((f) => f !== '');
}

/** `base` with the profile's files overlaid in order, its `profile` set. */
function withProfile(base: Json, profile: ProfileName): Json {
  let merged = base;
  for (const f of PROFILES[profile]) merged = overlay(merged, readJson(join(CONFIG_DIR, f), `profile ${profile} (config/${f})`));
  return { ...merged, profile };
}

/**
 * The profile a configuration starts from: PROFILE, else the one the CONFIG_FILE files name (a profile's own
 * file names it), else the default file's. A file naming another profile than the one selected is refused:
 * it would undo part of the profile it is stacked on (its domains, its shapes) while the service reported
 * the other one.
 */
function selectProfile(envProfile: string | undefined, files: ReadonlyArray<{ path: string; json: Json }>, fallback: unknown): ProfileName {
  const known = PROFILE_NAMES.join(', ');
  if (envProfile !== undefined && !isProfile(envProfile)) throw new ConfigError('PROFILE', `unknown profile ${JSON.stringify(envProfile)} (known: ${known})`);
  for (const f of files) {
    if (f.json.profile !== undefined && !isProfile(f.json.profile)) throw new ConfigError('profile', `${f.path} names the unknown profile ${JSON.stringify(f.json.profile)} (known: ${known})`);
  }
  const named = files.filter((f) => f.json.profile !== undefined);
  const profile = envProfile ?? (named.length > 0 ? (named[named.length - 1]!.json.profile as ProfileName) : isProfile(fallback) ? fallback : 'spec');
  const other = named.find((f) => f.json.profile !== profile);
  if (other !== undefined) {
    const by = envProfile !== undefined ? `PROFILE=${profile}` : `${named[named.length - 1]!.path} (profile ${profile})`;
    throw new ConfigError('profile', `${other.path} is the ${String(other.json.profile)} profile's file, and ${by} selects another: start from one profile and stack files without a "profile" key on it`);
  }
  return profile;
}

/** Loads, merges, validates and freezes the configuration. Throws ConfigError naming the bad key. */
export function loadConfig(opts: LoadOptions = {}): Readonly<Config> {
  const env = opts.env ?? process.env;
  const base = readJson(opts.defaultPath ?? DEFAULT_CONFIG_PATH, 'config/default.json');
  const files = configFiles(env.CONFIG_FILE).map((path) => ({ path, json: readJson(resolve(path), 'CONFIG_FILE') }));
  let merged = withProfile(base, selectProfile(env.PROFILE, files, base.profile));
  for (const f of files) merged = overlay(merged, f.json);
  merged = overlay(merged, envOverlay(env));
  return finish(merged);
}

/** Schema check, bucket defaults, then the checks a schema cannot express (CIDRs). */
function finish(merged: Json): Readonly<Config> {
  // Files written when `demo` was a boolean keep working: true was the demo, now its live form.
  if (typeof merged.demo === 'boolean') merged = { ...merged, demo: merged.demo ? 'live' : 'off' };
  const err = firstError(merged);
  if (err) throw err;
  const cfg = merged as Config;
  // Unnamed buckets take the spec's defaults; configured ones override them one by one.
  cfg.rateLimits.buckets = { ...DEFAULT_BUCKETS, ...cfg.rateLimits.buckets };
  for (const [key, list] of [['http.trustedProxies', cfg.http.trustedProxies], ['dataApi.ipAllowlist', cfg.dataApi.ipAllowlist]] as const) {
    try {
      compileIpList(list);
    } catch (e) {
      throw new ConfigError(key, (e as Error).message);
    }
  }
  return deepFreeze(cfg);
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const child of Object.values(v)) deepFreeze(child);
    Object.freeze(v);
  }
  return v;
}

/**
 * For embedding programs (src/harness/): the defaults overlaid by each layer in turn (a config file's JSON,
 * then overrides), validated and frozen, without reading the environment. A bad value throws ConfigError.
 */
export function configOf(...layers: Json[]): Readonly<Config> {
  return finish(layers.reduce<Json>((merged, layer) => overlay(merged, layer), readJson(DEFAULT_CONFIG_PATH, 'config/default.json')));
}

/** A JSON object from a file, for configOf; a missing or malformed file throws ConfigError naming `key`. */
export function readConfigFile(path: string, key = 'configFile'): Record<string, unknown> {
  return readJson(resolve(path), key);
}

/**
 * For tests: a validated configuration built from defaults plus overrides, without reading env. The demo
 * is `static` unless the overrides name it: a live demo replays a week of trading at every fresh start
 * (seconds) and keeps trading beside whatever the test does. `profile` in the overrides starts from that
 * profile's files, as PROFILE does.
 */
export function testConfig(overrides: Json = {}): Readonly<Config> {
  const base = { ...readJson(DEFAULT_CONFIG_PATH, 'config/default.json'), demo: 'static' };
  const profile = overrides.profile;
  if (profile !== undefined && !isProfile(profile)) throw new ConfigError('profile', `unknown profile ${JSON.stringify(profile)}`);
  return finish(overlay(profile === undefined ? base : withProfile(base, profile), overrides));
}

