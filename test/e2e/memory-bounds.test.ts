/**
 * What a client can make a running service keep, measured as an attacker would see it: the service as
 * `npm start` runs it (a child process, tools/service-process.ts), its RSS read from /proc (issue 39,
 * finding 1).
 *
 * The refusal log: free API keys for two sets of wallets (one L1 request each), then 401s naming those
 * wallets in the address header, each request carrying NAMES made-up NAME_CHARS-character header names,
 * different in every request (the head bound raised to 64 KiB, so each request's names are 60 KB; the log
 * once kept the first 40 names of each entry as sent: the 504 MB -> 4.5 GB and a heap exhaustion).
 * A first flood on the first set fills the log to its bound and grows the heap to what serving such a
 * flood takes; the second, on the other set, must then leave the RSS where it was, within RSS_GROWTH_MB:
 * a log bounded in bytes (edge/refusals/log.ts) forgets the first set's entries as it keeps the second's,
 * where one that kept what was sent held 150 MB more. Rate limits off: the bound must hold whatever the caps.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { startService, type ServiceProcess } from '../../tools/service-process.ts';
import { l1Headers, l2Headers } from '../../tools/load.ts';

/** Wallets per set (two sets). */
const WALLETS = 25;
const REFUSALS_PER_WALLET = 100;
const NAMES = 40;
const NAME_CHARS = 1500;
const RSS_GROWTH_MB = 60;

let svc: ServiceProcess;
let dir: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pm-memory-bounds-'));
  svc = await startService({ dataDir: join(dir, 'data'), adminToken: 't', env: { RATE_LIMITS: 'off', MAX_HEADER_BYTES: String(64 * 1024) } });
});

after(async () => {
  await svc?.stop('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/** Sends `requests` on one connection, pipelined `depth` at a time; resolves with the status codes' counts. */
function pipelined(port: number, requests: Iterable<Buffer>, depth: number): Promise<Map<number, number>> {
  return new Promise((resolve, reject) => {
    const statuses = new Map<number, number>();
    const it = requests[Symbol.iterator]();
    const sock = net.connect(port, '127.0.0.1');
    let outstanding = 0;
    let done = false;
    let tail = '';
    const fill = () => {
      while (!done && outstanding < depth) {
        const n = it.next();
        if (n.done) {
          done = true;
          break;
        }
        outstanding++;
        sock.write(n.value);
      }
      if (done && outstanding === 0) {
        sock.destroy();
        resolve(statuses);
      }
    };
    sock.on('connect', fill);
    sock.on('error', reject);
    sock.on('data', (b: Buffer) => {
      const text = tail + b.toString('latin1');
      const re = /HTTP\/1\.1 (\d{3})/g;
      let m: RegExpExecArray | null;
      let last = 0;
      while ((m = re.exec(text)) !== null) {
        statuses.set(Number(m[1]), (statuses.get(Number(m[1])) ?? 0) + 1);
        outstanding--;
        last = re.lastIndex;
      }
      tail = text.slice(Math.max(last, text.length - 16));
      fill();
    });
  });
}

test(`a refusal-log flood (${WALLETS} more wallets x ${REFUSALS_PER_WALLET} refusals, ${NAMES} random ${NAME_CHARS}-character header names each) grows the service's RSS by less than ${RSS_GROWTH_MB} MB`, { timeout: 180_000 }, async (t) => {
  const info = (await (await fetch(`${svc.url}/exchange-info`)).json()) as { authDomain: { name: string; version: string; chainId: number } };
  type Creds = { address: string; apiKey: string; passphrase: string; hmacKey: Buffer };
  const key = async (i: number): Promise<Creds> => {
    const account = privateKeyToAccount(`0x${'ab'.repeat(16)}${(i + 1).toString(16).padStart(32, '0')}`);
    const r = await fetch(`${svc.url}/auth/api-key`, { method: 'POST', headers: await l1Headers(account, info.authDomain, 0n) });
    const c = (await r.json()) as { apiKey: string; secret: string; passphrase: string };
    assert.equal(r.status, 200, JSON.stringify(c));
    return { address: account.address, apiKey: c.apiKey, passphrase: c.passphrase, hmacKey: Buffer.from(c.secret, 'base64url') };
  };
  const first = await Promise.all(Array.from({ length: WALLETS }, (_, i) => key(i)));
  const second = await Promise.all(Array.from({ length: WALLETS }, (_, i) => key(WALLETS + i)));

  // Every name different from every other (a string the service made for one request is not another's),
  // built from one random tail and a counter, so the client's own work stays small.
  const tail = Buffer.from(`${randomBytes(NAME_CHARS / 2).toString('hex').slice(0, NAME_CHARS - 12)}: 1\r\n`);
  let n = 0;
  const request = (wallet: string): Buffer => {
    const parts = [Buffer.from(`POST /order HTTP/1.1\r\nHost: x\r\nPOLY_ADDRESS: ${wallet}\r\n`)];
    for (let i = 0; i < NAMES; i++) parts.push(Buffer.from(`x-${(n++).toString(36).padStart(8, '0')}-`), tail);
    parts.push(Buffer.from('Content-Length: 2\r\n\r\n{}'));
    return Buffer.concat(parts);
  };
  /** REFUSALS_PER_WALLET refusals for every wallet of `set`, over four pipelining connections. */
  const flood = async (set: Creds[]) => {
    const totals = new Map<number, number>();
    await Promise.all(
      Array.from({ length: 4 }, async (_, c) => {
        function* mine(): Generator<Buffer> {
          for (let k = c; k < set.length * REFUSALS_PER_WALLET; k += 4) yield request(set[k % set.length]!.address);
        }
        for (const [s, n] of await pipelined(svc.port, mine(), 8)) totals.set(s, (totals.get(s) ?? 0) + n);
      }),
    );
    assert.deepEqual([...totals], [[401, set.length * REFUSALS_PER_WALLET]]);
  };

  await flood(first);
  const rss0 = rssMb(svc.pid);
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(svc.pid))), 50);
  await flood(second);
  clearInterval(sampler);
  peak = Math.max(peak, rssMb(svc.pid));
  const grown = peak - rss0;
  t.diagnostic(`RSS ${rss0.toFixed(0)} MB after the first flood, at most ${peak.toFixed(0)} MB during the second`);
  assert.ok(grown < RSS_GROWTH_MB, `RSS grew by ${grown.toFixed(0)} MB (${rss0.toFixed(0)} -> ${peak.toFixed(0)} MB)`);
  // Kept, and bounded: a wallet of the second set reads its own list, every name cut.
  const list = (await (await fetch(`${svc.url}/refusals`, { headers: l2Headers(second[0]!, 'GET', '/refusals') })).json()) as { data: { headers: string[] }[] };
  assert.equal(list.data.length, REFUSALS_PER_WALLET);
  assert.ok(list.data[0]!.headers.every((h) => h.length <= 48), JSON.stringify(list.data[0]).slice(0, 300));
  assert.equal((await fetch(`${svc.url}/time`)).status, 200);
});
