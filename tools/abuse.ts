/**
 * One abusive client, for bench/edge/abuse.bench.ts: runs one pattern against a service for a bounded
 * time at the highest rate its caps allow (paced to the cap, not flooding: the point is that a client
 * who stays within its caps cannot hurt anyone else), then prints what it sent, what its pacing planned to
 * send, what it got back and its own CPU seconds over the attack as one JSON line.
 *
 *   npx tsx tools/abuse.ts --url http://127.0.0.1:8080 --pattern methods --seconds 7 [--xff 10.6.6.6]
 *
 * Patterns (the findings of the hardening issue):
 *   methods   made-up method tokens up to 4 KB long on unknown routes, at the order-book cap (500/s)
 *   arrays    1 MiB JSON arrays of wrong elements to POST /last-trades-prices, at 500/s
 *   nesting   200 KB of `[[[[...` to POST /prices, at its named cap (8/s), and to unknown routes at 500/s
 *             (`nesting-known` and `nesting-unknown` are its two halves, alone: which one costs what)
 *   pipeline  4 connections, each pipelining 250 GET /openapi.json and never reading, renewed every 2 s
 *             (500 requests a second in all, the order-book cap)
 *   replay    one captured signed DELETE /cancel-all sent again and again, at the order-book cap (500/s)
 *   framing   requests with two different Content-Lengths, at 500/s
 *   keys      one funded wallet (--key) with 10 API keys placing orders on all of them, 48/s on each:
 *             twice what the wallet's trading cap (240/s) admits, which each key's own cap would allow
 * With --xff, every request carries X-Forwarded-For (the service must trust 127.0.0.1 as a proxy), so the
 * attacker is one client of its own and not the bench's well-behaved one.
 */
import net from 'node:net';
import { parseArgs } from 'node:util';
import { privateKeyToAccount } from 'viem/accounts';
import { OrderSigner, type SigningWallet } from '../src/demo/order-signer.ts';
import { l1Headers, l2Headers } from './load.ts';

interface Tally {
  sent: number;
  /** What the pattern's pacing aims to send in its time: a caller can check that the attack ran at its full rate. */
  planned: number;
  statuses: Record<string, number>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls `send` at `rate` per second with at most `inFlight` outstanding, until `until`. */
async function paced(rate: number, inFlight: number, until: number, send: () => Promise<number>, tally: Tally): Promise<void> {
  const t0 = Date.now();
  tally.planned += Math.floor((rate * (until - t0)) / 1000);
  let k = 0;
  let open = 0;
  const pending = new Set<Promise<void>>();
  while (Date.now() < until) {
    const due = t0 + (k * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 0) await sleep(wait);
    if (open >= inFlight) {
      await Promise.race(pending);
      continue;
    }
    k++;
    open++;
    tally.sent++;
    const p: Promise<void> = send()
      .then(
        (status) => void (tally.statuses[status] = (tally.statuses[status] ?? 0) + 1),
        () => void (tally.statuses.error = (tally.statuses.error ?? 0) + 1),
      )
      .finally(() => {
        open--;
        pending.delete(p);
      });
    pending.add(p);
  }
  await Promise.all(pending);
}

/** One raw request on its own connection; resolves with the first status line's code (0: none). */
function raw(url: URL, bytes: Buffer | string): Promise<number> {
  return new Promise((resolve) => {
    const s = net.connect(Number(url.port), url.hostname);
    let got = '';
    const done = (status: number) => {
      s.destroy();
      resolve(status);
    };
    s.on('connect', () => s.write(bytes));
    s.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      if (m && Number(m[1]) >= 200) done(Number(m[1]));
    });
    s.on('error', () => done(0));
    s.on('close', () => done(0));
    s.setTimeout(10_000, () => done(0));
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      pattern: { type: 'string' },
      seconds: { type: 'string', default: '7' },
      xff: { type: 'string' },
      key: { type: 'string' },
    },
  });
  if (!values.url || !values.pattern) throw new Error('usage: tools/abuse.ts --url URL --pattern P [--seconds S] [--xff IP] [--key 0x...]');
  const url = new URL(values.url);
  // The attack runs for --seconds from the end of its set-up (keys, signed bodies), which it announces with a
  // `{"ready":true}` line, so a caller can time its window from the attack rather than from the process start.
  let until = 0;
  let cpu0 = process.cpuUsage();
  const go = (): number => {
    until = Date.now() + Number(values.seconds) * 1000;
    cpu0 = process.cpuUsage();
    process.stdout.write('{"ready":true}\n');
    return until;
  };
  const xff = values.xff ? `X-Forwarded-For: ${values.xff}\r\n` : '';
  const xffHeader: Record<string, string> = values.xff ? { 'x-forwarded-for': values.xff } : {};
  const tally: Tally = { sent: 0, planned: 0, statuses: {} };
  const head = (method: string, path: string, extra = '') => `${method} ${path} HTTP/1.1\r\nHost: x\r\n${xff}${extra}Connection: close\r\n`;

  switch (values.pattern) {
    case 'methods':
      await paced(500, 32, go(), () => raw(url, `${head(`M${Math.random().toString(36).slice(2).toUpperCase()}${'X'.repeat(Math.floor(Math.random() * 4000))}`, '/no/such/route')}\r\n`), tally);
      break;
    case 'arrays': {
      const body = Buffer.from(`[${Array(520_000).fill('1').join(',')}]`);
      // One request, built once: copying 1 MiB per request (500 MiB/s) was client CPU taken from the service's cores.
      const request = Buffer.concat([Buffer.from(`${head('POST', '/last-trades-prices', `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n`)}\r\n`), body]);
      await paced(500, 16, go(), () => raw(url, request), tally);
      break;
    }
    case 'nesting':
    case 'nesting-known':
    case 'nesting-unknown': {
      const body = Buffer.from('['.repeat(100_000) + ']'.repeat(100_000));
      const to = (path: string) => {
        const request = Buffer.concat([Buffer.from(`${head('POST', path, `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n`)}\r\n`), body]);
        return () => raw(url, request);
      };
      const end = go();
      await Promise.all([
        values.pattern !== 'nesting-unknown' && paced(8, 4, end, to('/prices'), tally),
        values.pattern !== 'nesting-known' && paced(500, 16, end, to('/no/such/route'), tally),
      ]);
      break;
    }
    case 'pipeline': {
      const pipelined = `GET /openapi.json HTTP/1.1\r\nHost: x\r\n${xff}\r\n`.repeat(250);
      tally.planned = 500 * Number(values.seconds);
      go();
      while (Date.now() < until) {
        const sockets = Array.from({ length: 4 }, () => {
          const s = net.connect(Number(url.port), url.hostname, () => s.write(pipelined));
          s.pause();
          s.on('error', () => undefined);
          return s;
        });
        tally.sent += 1000;
        await sleep(2000);
        for (const s of sockets) s.destroy();
      }
      break;
    }
    case 'replay': {
      const info = (await (await fetch(`${url.origin}/exchange-info`)).json()) as { authDomain: { name: string; version: string; chainId: number } };
      const account = privateKeyToAccount(`0x${'ab'.repeat(31)}01`);
      const created = await fetch(`${url.origin}/auth/api-key`, { method: 'POST', headers: { ...xffHeader, ...(await l1Headers(account, info.authDomain, 0n)) } });
      const creds = (created.status === 200 ? await created.json() : await (await fetch(`${url.origin}/auth/derive-api-key`, { headers: { ...xffHeader, ...(await l1Headers(account, info.authDomain, 0n)) } })).json()) as { apiKey: string; secret: string; passphrase: string };
      const wallet = { address: account.address.toLowerCase(), apiKey: creds.apiKey, passphrase: creds.passphrase, hmacKey: Buffer.from(creds.secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64') };
      let captured = l2Headers(wallet, 'DELETE', '/cancel-all');
      let capturedAt = Date.now();
      await paced(500, 32, go(), async () => {
        // A capture is replayable for the skew window: take a fresh one every 20 s.
        if (Date.now() - capturedAt > 20_000) {
          captured = l2Headers(wallet, 'DELETE', '/cancel-all');
          capturedAt = Date.now();
        }
        const r = await fetch(`${url.origin}/cancel-all`, { method: 'DELETE', headers: { ...xffHeader, ...captured } });
        await r.arrayBuffer();
        return r.status;
      }, tally);
      break;
    }
    case 'framing':
      await paced(500, 32, go(), () => raw(url, `${head('POST', '/prices', 'Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 40\r\n')}\r\n[]`), tally);
      break;
    case 'keys': {
      if (!values.key) throw new Error('--key: the private key of a funded wallet');
      const info = (await (await fetch(`${url.origin}/exchange-info`)).json()) as { authDomain: { name: string; version: string; chainId: number }; orderDomain: never; negRiskOrderDomain: never };
      const markets = (await (await fetch(`${url.origin}/markets?limit=1`)).json()) as { data: { tokens: { token_id: string }[]; neg_risk: boolean }[] };
      const market = markets.data.find((m) => m.tokens.length > 0)!;
      const account = privateKeyToAccount(values.key as `0x${string}`);
      const keys: SigningWallet[] = [];
      const hmac: { apiKey: string; passphrase: string; hmacKey: Buffer }[] = [];
      for (let n = 0n; n < 10n; n++) {
        // A second run against the same service (the bench's rounds) derives the keys the first one created.
        const r = await fetch(`${url.origin}/auth/api-key`, { method: 'POST', headers: { ...xffHeader, ...(await l1Headers(account, info.authDomain, n)) } });
        const c = (r.status === 200 ? await r.json() : await (await fetch(`${url.origin}/auth/derive-api-key`, { headers: { ...xffHeader, ...(await l1Headers(account, info.authDomain, n)) } })).json()) as { apiKey: string; secret: string; passphrase: string };
        if (c.secret === undefined) throw new Error(`no API key for nonce ${n}: ${JSON.stringify(c)}`);
        keys.push({ privateKey: values.key, address: account.address.toLowerCase(), apiKey: c.apiKey });
        hmac.push({ apiKey: c.apiKey, passphrase: c.passphrase, hmacKey: Buffer.from(c.secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64') });
      }
      const signer = new OrderSigner({ normal: info.orderDomain, negRisk: info.negRiskOrderDomain });
      const perKey = Math.ceil(48 * Number(values.seconds));
      const bodies = keys.map((k) =>
        Array.from({ length: perKey }, (_, i) =>
          JSON.stringify(signer.sign(k, { tokenId: market.tokens[0]!.token_id, negRisk: market.neg_risk, leg: { outcome: 0, side: 'BUY', pricePips: 100, sizeUnits: 5_000_000 }, orderType: 'GTC', salt: i + 1, timestampMs: Date.now() }).submission),
        ),
      );
      const end = go();
      await Promise.all(
        keys.map((k, j) => {
          let i = 0;
          return paced(48, 8, end, () => {
            // Raw bytes on a connection of its own, as the other patterns send: the attacker's own client CPU
            // (fetch's is several times this) is taken from the same two cores as the service's.
            const body = bodies[j]![i++ % perKey]!;
            const l2 = l2Headers({ ...hmac[j]!, address: k.address }, 'POST', '/order', body);
            const extra = Object.entries(l2).map(([name, v]) => `${name}: ${v}\r\n`).join('');
            return raw(url, `${head('POST', '/order', `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}`)}\r\n${body}`);
          }, tally);
        }),
      );
      break;
    }
    default:
      throw new Error(`unknown pattern ${values.pattern}`);
  }
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(`${JSON.stringify({ pattern: values.pattern, ...tally, cpuS: (cpu.user + cpu.system) / 1e6 })}\n`);
}

await main();
