/**
 * The abuse bench's attacker (tools/abuse.ts): how it names what it gets back, and its issue-31 patterns
 * against small stand-ins that answer as the hardened service is to (error frames, 4008, 429 on upgrades,
 * 401 before the body with the connection closed), so what it counts, sends and plans can be checked
 * against what the stand-in saw.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { MESSAGE_BUDGET, attack, chunkIds, dueCount, errorKind, frameOutcome } from '../../tools/abuse.ts';

const cases: { name: string; input: string; expected: string }[] = [
  { name: 'the words before the colon', input: 'too many messages: at most 20 a second', expected: 'too-many-messages' },
  { name: 'words with digits left out', input: 'dump budget exceeded: 5000 books per 10 s', expected: 'dump-budget-exceeded' },
  { name: 'a count before the words', input: '500 unknown markets ignored: 0xab, 0xcd', expected: 'unknown-markets-ignored' },
  { name: 'no colon', input: 'invalid JSON', expected: 'invalid-json' },
  { name: 'nothing to name', input: '', expected: 'unnamed' },
];
for (const c of cases) test(`errorKind: ${c.name}`, () => assert.equal(errorKind(c.input), c.expected));

test('frameOutcome: dumps, updates, errors by kind, anything else', () => {
  const f = (s: string) => frameOutcome(Buffer.from(s));
  assert.equal(f('[{"event_type":"book","asset_id":"1"},{"event_type":"book","asset_id":"2"}]'), 'frame-book');
  assert.equal(f('{"event_type":"price_change","market":"0x1"}'), 'frame-update');
  assert.equal(f('{"event_type":"error","error":"dump budget exceeded: try later"}'), 'frame-error:dump-budget-exceeded');
  assert.equal(f('PONG'), 'frame-other');
});

test('dueCount and chunkIds: a schedule\'s due times in [start, end); lists under the message budget', () => {
  assert.equal(dueCount(0, 100, 10), 10);
  assert.equal(dueCount(0, 101, 10), 11);
  assert.equal(dueCount(0, 1, 100), 1);
  assert.equal(dueCount(5, 5, 10), 0);
  const ids = Array.from({ length: 500 }, (_, i) => `0x${i.toString(16).padStart(64, '0')}`);
  const lists = chunkIds(ids);
  assert.deepEqual(lists.flat(), ids);
  assert.equal(lists.length, 3);
  const auth = { apiKey: 'x'.repeat(36), secret: 'x'.repeat(44), passphrase: 'x'.repeat(64) };
  for (const l of lists) assert.ok(JSON.stringify({ auth, markets: l, type: 'user' }).length <= MESSAGE_BUDGET);
});

/** An HTTP server on loopback (with `upgrade` for the WebSocket stand-ins); closes every socket at the end. */
async function listen(handler: http.RequestListener, upgrade?: (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => void) {
  const server = http.createServer(handler);
  if (upgrade) server.on('upgrade', upgrade);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

const refuse = (socket: net.Socket, status: string) => socket.end(`HTTP/1.1 ${status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);

test('dump-flood against per-socket message caps, a per-address dump budget and refused upgrades', async () => {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const seen = { upgrades: 0, refused: 0, opened: 0, books: 0, errors: new Map<string, number>(), closed4008: 0, bytes: 0, xff: new Set<string>(), first: 0 };
  let dumpsLeft = 300;
  const send = (ws: WebSocket, frame: string) => {
    seen.bytes += Buffer.byteLength(frame);
    ws.send(frame);
  };
  const error = (ws: WebSocket, text: string) => {
    seen.errors.set(text.split(':')[0]!, (seen.errors.get(text.split(':')[0]!) ?? 0) + 1);
    send(ws, JSON.stringify({ event_type: 'error', error: text }));
  };
  const srv = await listen(
    (req, res) => {
      assert.equal(req.url, '/markets');
      res.end(JSON.stringify({ data: [{ tokens: [{ token_id: '11' }, { token_id: '12' }] }], next_cursor: 'LTE=' }));
    },
    (req, socket, head) => {
      seen.upgrades++;
      seen.xff.add(String(req.headers['x-forwarded-for']));
      // Past the first 50, every other reopening is refused (the connect limit).
      if (seen.upgrades > 50 && seen.upgrades % 2 === 0) {
        seen.refused++;
        return refuse(socket, '429 Too Many Requests');
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        seen.opened++;
        let messages = 0;
        ws.on('message', (data) => {
          const msg = JSON.parse(String(data)) as { type?: string; operation?: string; assets_ids: string[] };
          assert.deepEqual(msg.assets_ids, ['11', '12']);
          if (++messages === 1) {
            assert.equal(msg.type, 'market', 'the first message subscribes');
            seen.first++;
          } else assert.equal(msg.operation, 'subscribe');
          if (messages > 30) {
            if (messages === 31) {
              seen.closed4008++;
              ws.close(4008, 'too many messages');
            }
            return;
          }
          if (messages > 20) return error(ws, 'too many messages: at most 20 a second');
          if (dumpsLeft <= 0) return error(ws, 'dump budget exceeded: 600 books per 10 s');
          dumpsLeft--;
          seen.books++;
          send(ws, JSON.stringify(msg.assets_ids.map((asset_id) => ({ event_type: 'book', asset_id, bids: [], asks: [] }))));
        });
      });
    },
  );
  try {
    const r = await attack({ url: srv.url, pattern: 'dump-flood', seconds: 1.5, xff: '10.6.6.6' });
    assert.deepEqual([...seen.xff], ['10.6.6.6'], 'every upgrade from the one address');
    assert.deepEqual(
      Object.keys(r.statuses).sort(),
      ['close-4008', 'frame-book', 'frame-error:dump-budget-exceeded', 'frame-error:too-many-messages', 'ws-closed', 'ws-open', 'ws-refused-429'],
    );
    assert.equal(r.statuses['ws-open'], seen.opened);
    assert.equal(r.statuses['ws-refused-429'], seen.refused);
    assert.equal(r.statuses['ws-open']! + r.statuses['ws-refused-429']!, seen.upgrades);
    assert.equal(r.statuses['close-4008'], seen.closed4008);
    // A socket the stand-in opened as the attack ended may be closed before its first message leaves: a few, or
    // under load (CI runs two files at once) up to a tenth (156 of 166 was seen); a socket that began otherwise
    // would show as a frame of another kind above.
    assert.ok(seen.first <= seen.opened && seen.first >= seen.opened - Math.max(5, seen.opened / 10), `each socket began with a market subscription (${seen.first} of ${seen.opened})`);
    assert.equal(r.statuses['ws-closed'], seen.opened - seen.closed4008, 'the attacker closed the rest at its end');
    assert.equal(r.statuses['frame-book'], seen.books);
    assert.equal(r.statuses['frame-error:too-many-messages'], seen.errors.get('too many messages'));
    assert.equal(r.statuses['frame-error:dump-budget-exceeded'], seen.errors.get('dump budget exceeded'));
    assert.equal(r.bytesIn, seen.bytes, 'every byte the stand-in sent');
    // Messages while open and upgrades while not, each on its schedule: about 100 a second on each of 50
    // sockets. The stand-in shares the attacker's process and cores, which can leave it behind its schedule
    // (the bench's own check is the strict one), and upgrades are planned slower than messages: under load fewer messages
    // are planned (the CI runs two test files at once: 4,983 planned was seen there); a plan counted at the wrong pace
    // (per socket, or per second) would be an order of magnitude off.
    assert.ok(r.planned > 50 * 60 && r.planned <= 50 * 150, `${r.planned} planned`);
    assert.ok(r.sent >= 0.5 * r.planned && r.sent <= r.planned + 50, `sent ${r.sent} of ${r.planned} planned`);
    // Sockets closed after 31 messages (0.3 s) and reopened: a 1.5 s attack opens each more than once.
    assert.ok(seen.opened > 100, `${seen.opened} sockets opened`);
  } finally {
    await srv.close();
  }
});

test('user-subs: eight addresses, 500 made-up ids a socket in messages under the budget, cycles at the connect cap', async () => {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const open = new Map<string, number>();
  const seen = { opened: 0, refused: 0, errors: 0, maxOpen: 0, largest: 0, ids: [] as number[], sockets: 0, xff: new Set<string>(), badAuth: 0 };
  const auth = { apiKey: 'key-1', secret: 'c2VjcmV0', passphrase: 'pass' };
  const srv = await listen(
    (req, res) => {
      if (req.url === '/exchange-info') return res.end(JSON.stringify({ authDomain: { name: 'ClobAuthDomain', version: '1', chainId: 137 } }));
      if (req.method === 'POST' && req.url === '/auth/api-key') return res.end(JSON.stringify(auth));
      res.statusCode = 404;
      res.end();
    },
    (req, socket, head) => {
      const ip = String(req.headers['x-forwarded-for']);
      seen.xff.add(ip);
      if ((open.get(ip) ?? 0) >= 100) {
        seen.refused++;
        return refuse(socket, '429 Too Many Requests');
      }
      open.set(ip, (open.get(ip) ?? 0) + 1);
      seen.maxOpen = Math.max(seen.maxOpen, open.get(ip)!);
      wss.handleUpgrade(req, socket, head, (ws) => {
        seen.opened++;
        const ids = new Set<string>();
        ws.on('message', (data) => {
          seen.largest = Math.max(seen.largest, (data as Buffer).length);
          const msg = JSON.parse(String(data)) as { auth?: typeof auth; type?: string; operation?: string; markets: string[] };
          if (ids.size === 0 && (msg.type !== 'user' || JSON.stringify(msg.auth) !== JSON.stringify(auth))) seen.badAuth++;
          for (const m of msg.markets) ids.add(m);
          seen.errors++;
          ws.send(JSON.stringify({ event_type: 'error', error: `unknown markets ignored: ${msg.markets.slice(0, 3).join(', ')}` }));
        });
        ws.on('close', () => {
          open.set(ip, open.get(ip)! - 1);
          seen.ids.push(ids.size);
        });
      });
    },
  );
  try {
    const r = await attack({ url: srv.url, pattern: 'user-subs', seconds: 1.5, xff: '10.6.6.6' });
    assert.deepEqual([...seen.xff].sort(), Array.from({ length: 8 }, (_, i) => `10.6.6.${7 + i}`).sort());
    assert.equal(seen.badAuth, 0, 'each socket began with its credentials');
    assert.ok(seen.largest <= MESSAGE_BUDGET, `a message of ${seen.largest} bytes`);
    assert.ok(seen.maxOpen <= 100);
    // The stand-in's close events may trail the attacker's by a moment.
    for (let i = 0; i < 50 && seen.ids.length < seen.opened; i++) await new Promise((res) => setTimeout(res, 20));
    assert.ok(seen.ids.every((n) => n === 500), 'every socket asked for its 500 ids');
    assert.equal(r.statuses['ws-open'], seen.opened);
    assert.equal(r.statuses['ws-refused-429'] ?? 0, seen.refused);
    assert.equal(r.statuses['ws-closed'], seen.opened, 'the attacker closed every socket it opened');
    assert.equal(r.statuses['frame-error:unknown-markets-ignored'], seen.errors);
    // 800 at once, then 10 cycles a second per address from the attack's start. The stand-in shares the
    // attacker's process and cores, which can leave it behind its schedule: the bench's check is the strict one.
    assert.equal(r.planned, 800 + 8 * 15);
    assert.ok(seen.opened + seen.refused > 800, 'cycles');
    assert.ok(r.sent >= 0.5 * r.planned && r.sent <= r.planned, `sent ${r.sent} of ${r.planned} planned`);
    assert.equal(r.sent, seen.opened + seen.refused, 'sent counts upgrades');
  } finally {
    await srv.close();
  }
});

/** A stand-in for the signed routes: 401 as soon as a request's head is in, and the connection closed unread. */
async function unsignedStandIn() {
  const seen = { requests: 0, paths: [] as string[], signed: 0, xff: new Set<string>() };
  const server = net.createServer((s) => {
    let got = '';
    let answered = false;
    s.on('error', () => undefined);
    s.on('data', (d: Buffer) => {
      if (answered) return;
      got += d.toString('latin1');
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = got.slice(0, end);
      answered = true;
      seen.requests++;
      seen.paths.push(/^POST (\S+)/.exec(head)?.[1] ?? '?');
      if (/\r\n(svc|poly)_/i.test(head)) seen.signed++;
      seen.xff.add(/\r\nx-forwarded-for: *(\S+)/i.exec(head)?.[1] ?? '');
      if (!/\r\ncontent-length: 1048576(\r\n|$)/i.test(head)) seen.signed++;
      const body = '{"error":"Unauthorized/Invalid api key"}';
      s.end(`HTTP/1.1 401 Unauthorized\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
      s.destroySoon();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

test('unsigned-bodies: 1 MiB unsigned bodies to the three routes in turn at 500/s on two connections, reopened when closed', async () => {
  const srv = await unsignedStandIn();
  try {
    const r = await attack({ url: srv.url, pattern: 'unsigned-bodies', seconds: 1, xff: '10.6.6.6' });
    assert.equal(srv.seen.signed, 0, 'no SVC_ or POLY_ header, and 1 MiB bodies');
    assert.deepEqual([...srv.seen.xff], ['10.6.6.6']);
    assert.deepEqual(srv.seen.paths.slice(0, 3).sort(), ['/merge', '/split', '/v1/heartbeats']);
    assert.deepEqual(Object.keys(r.statuses).filter((s) => s !== '401' && s !== '0'), []);
    assert.equal((r.statuses['401'] ?? 0) + (r.statuses['0'] ?? 0), r.sent);
    assert.ok((r.statuses['401'] ?? 0) >= 0.9 * r.sent, JSON.stringify(r.statuses));
    // The attacker shares its process and cores with the stand-in (and, in CI, with another test file): each
    // request writes 1 MiB, and under load it falls far behind its schedule (399, then 238 of 500 were seen).
    // What is checked here is that it sends, counts and plans; the bench's own check of its pace is the strict one.
    assert.ok(r.sent >= 0.1 * r.planned, `sent ${r.sent} of ${r.planned} planned`);
    // 500 due in the second from the attack's start (its schedule begins a moment after).
    assert.ok(r.planned >= 495 && r.planned <= 500, `${r.planned} planned`);
    assert.ok(r.sent <= r.planned);
  } finally {
    await srv.close();
  }
});

test('the command line announces its attack, then prints its tally as the last line', async () => {
  const srv = await unsignedStandIn();
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', 'tools/abuse.ts', '--url', srv.url, '--pattern', 'unsigned-bodies', '--seconds', '0.5', '--xff', '10.6.6.6'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    assert.equal(code, 0);
    const lines = out.trim().split('\n');
    assert.equal(lines[0], '{"ready":true}');
    const result = JSON.parse(lines.at(-1)!) as { pattern: string; sent: number; planned: number; statuses: Record<string, number>; cpuS: number };
    assert.equal(result.pattern, 'unsigned-bodies');
    assert.ok(result.planned >= 245 && result.planned <= 250, `${result.planned} planned`);
    assert.ok(result.sent > 0 && result.cpuS > 0);
  } finally {
    await srv.close();
  }
});
