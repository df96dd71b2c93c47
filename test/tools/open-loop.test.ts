import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { runOpenLoop, runOpenLoopChild } from '../../bench/lib/open-loop.ts';

/** A server that answers at once, except that it stalls every request for `stallMs` once `stallAt` have arrived. */
async function server(stallAt: number, stallMs: number): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  let stalled = false;
  const s = http.createServer((req, res) => {
    seen.push(req.url ?? '');
    const answer = () => {
      res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    };
    if (!stalled && seen.length === stallAt) {
      stalled = true;
      setTimeout(answer, stallMs);
    } else answer();
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((r) => s.close(() => r())) };
}

test('open loop: requests leave on schedule, paths in turn, statuses counted', async () => {
  const srv = await server(0, 0);
  try {
    const r = await runOpenLoop({ url: srv.url, paths: ['/a', '/b', '/missing'], rate: 200, seconds: 1, connections: 2 });
    assert.equal(r.sent, 200);
    assert.equal(r.ok + r.non2xx + r.errors, 200);
    assert.equal(r.non2xx, 66, 'every third path answers 404');
    // Paths in turn: 200 requests over three paths. (Not the server's arrival order: two requests due in
    // the same tick leave on two connections and may arrive either way round.)
    const count = (path: string) => srv.seen.filter((u) => u === path).length;
    assert.deepEqual([count('/a'), count('/b'), count('/missing')], [67, 67, 66]);
    // 200 requests due over one second: the window cannot be much shorter than that.
    assert.ok(r.rps > 150 && r.rps < 210, `rate ${r.rps}`);
  } finally {
    await srv.close();
  }
});

test('open loop: requests queued behind a stalled one count from their due time', async () => {
  // One connection at 100/s (one due every 10 ms); the 20th request stalls 300 ms. The ~30 requests due
  // meanwhile wait in the client; a closed-loop client would time them from their late send (~0 ms).
  const srv = await server(20, 300);
  try {
    const r = await runOpenLoop({ url: srv.url, paths: ['/x'], rate: 100, seconds: 2, connections: 1 });
    assert.equal(r.ok, 200);
    assert.ok(r.max >= 290, `the stalled request itself: ${r.max} ms`);
    // 30 of 200 requests (15%) waited 10-300 ms: the p99 sits among them, far above a healthy answer.
    assert.ok(r.p99 >= 200, `p99 ${r.p99} ms carries the queued requests' wait`);
    assert.ok(r.p50 < 100, `p50 ${r.p50} ms: most requests were unaffected`);
  } finally {
    await srv.close();
  }
});

test('open loop in a child process: the parent gets the child\'s result', async () => {
  const srv = await server(0, 0);
  try {
    const r = await runOpenLoopChild({ url: srv.url, paths: ['/a', '/missing'], rate: 100, seconds: 0.5, connections: 1 });
    assert.equal(r.sent, 50);
    assert.equal(r.ok, 25);
    assert.equal(r.non2xx, 25);
    assert.equal(srv.seen.length, 50, 'the requests came from the child');
  } finally {
    await srv.close();
  }
});
