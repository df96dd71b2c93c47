/**
 * Graceful shutdown (DESIGN section 3, main.ts): stop accepting, let in-flight requests finish, close
 * LMDB last, exit 0. In process through startServer (a slow route) and through startApp (the real
 * route table, with /metrics slowed down so a request is in flight); then as a child process running
 * `node --import tsx src/main.ts` that gets SIGTERM.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApp } from '../../src/node/app.ts';
import { route } from '../../src/edge/pipeline/route.ts';
import { openStore, type Store } from '../../src/journal/env.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { sleep, startTestServer, tempDir, waitFor } from '../fixtures/edge.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

interface Res {
  status: number;
  text: string;
  at: number;
}

function request(port: number, path: string): Promise<Res> {
  return new Promise((resolvePromise, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, text, at: performance.now() }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Resolves with the connect error code, or 'connected'. */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolvePromise) => {
    const s = net.connect(port, '127.0.0.1');
    s.on('connect', () => {
      s.destroy();
      resolvePromise('connected');
    });
    s.on('error', (e: NodeJS.ErrnoException) => resolvePromise(e.code ?? e.message));
  });
}

test('startServer close(grace): the in-flight request completes with 200, new connections are refused, close resolves after it', async () => {
  const marks: Record<string, number> = {};
  const srv = await startTestServer([
    route({
      method: 'GET',
      path: '/slow',
      group: 'clob',
      summary: 'slow',
      handler: async () => {
        await sleep(500);
        marks.handlerDone = performance.now();
        return { done: true };
      },
    }),
  ]);
  const inflight = request(srv.port, '/slow');
  await waitFor(() => srv.server.inFlight.size === 1, 2000, 'request in flight');
  const closing = srv.server.close(5000).then((drained) => {
    marks.closed = performance.now();
    return drained;
  });
  await sleep(50);
  assert.equal(await tryConnect(srv.port), 'ECONNREFUSED', 'listen socket closed at once');
  const res = await inflight;
  assert.equal(res.status, 200);
  assert.deepEqual(JSON.parse(res.text), { done: true });
  assert.equal(await closing, true, 'drained within the grace period');
  assert.ok(marks.closed >= marks.handlerDone, 'close resolved after the in-flight request finished');
  assert.equal(srv.server.inFlight.size, 0);
});

test('startServer close(grace) with a grace shorter than the request: returns false, the late answer is dropped, no crash', async () => {
  let finished = false;
  const srv = await startTestServer([
    route({ method: 'GET', path: '/slow', group: 'clob', summary: 'slow', handler: async () => { await sleep(300); finished = true; return 1; } }),
  ]);
  const inflight = request(srv.port, '/slow').then((r) => r.status, (e: NodeJS.ErrnoException) => e.code ?? 'error');
  await waitFor(() => srv.server.inFlight.size === 1, 2000, 'request in flight');
  assert.equal(await srv.server.close(50), false);
  const outcome = await inflight;
  assert.notEqual(outcome, 200, 'the connection was closed before the answer');
  await waitFor(() => finished, 2000, 'handler to finish after the close');
  await sleep(20);
});

test('app.stop(): in-flight request (real route table) completes with 200, new connections refused, LMDB closed last', async () => {
  const events: string[] = [];
  const dataDir = tempDir();
  const real = openStore({ dataDir });
  let inFlightAtStoreClose = -1;
  let appRef: { server: { inFlight: { size: number } } } | undefined;
  const store: Store = {
    ...real,
    close: async () => {
      inFlightAtStoreClose = appRef?.server.inFlight.size ?? -1;
      events.push('store.close');
      await real.close();
    },
  };
  const app = await startApp(testConfig({ dataDir, http: { port: 0 }, rateLimits: { enabled: false } }), { log: silentLogger, store });
  appRef = app;
  // Slow /metrics down: its handler awaits ctx.metrics.text() when the request arrives.
  const metrics = app.ctx.metrics;
  const text = metrics.text.bind(metrics);
  metrics.text = async () => {
    events.push('handler.start');
    await sleep(500);
    events.push('handler.done');
    return text();
  };
  const port = app.port;
  assert.equal((await request(port, '/')).status, 200);

  const inflight = request(port, '/metrics').then((r) => {
    events.push('response');
    return r;
  });
  await waitFor(() => events.includes('handler.start'), 2000, '/metrics in flight');
  const stopping = app.stop(5000).then(() => events.push('stop.resolved'));
  await sleep(50);
  assert.equal(await tryConnect(port), 'ECONNREFUSED');
  assert.equal(app.ctx.state.ready, false, 'not ready while stopping');
  const res = await inflight;
  assert.equal(res.status, 200);
  assert.match(res.text, /http_requests_total/);
  await stopping;
  assert.equal(inFlightAtStoreClose, 0, 'no request in flight when LMDB closes');
  assert.deepEqual(
    events.filter((e) => e !== 'response'),
    ['handler.start', 'handler.done', 'store.close', 'stop.resolved'],
  );
  assert.ok(events.indexOf('store.close') > events.indexOf('handler.done'));
  assert.throws(() => real.meta.get('storeVersion'), 'the LMDB environment is closed');
  // stop() is idempotent.
  await app.stop();
});

/** A free TCP port: listen on 0, read it, close. */
function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolvePromise(port));
    });
  });
}

test('child process: SIGTERM stops `node --import tsx src/main.ts` with exit code 0 and logs the shutdown', { timeout: 20_000 }, async () => {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: tempDir(), DEMO: '0', LOG_LEVEL: 'info', CONFIG_FILE: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  try {
    const until = Date.now() + 15_000;
    let ready = false;
    while (!ready && Date.now() < until && child.exitCode === null) {
      try {
        const r = await request(port, '/');
        ready = r.status === 200 && r.text === '"OK"';
      } catch {
        await sleep(100);
      }
    }
    assert.ok(ready, `GET / answered 200 "OK" within 15 s\nstdout: ${stdout}\nstderr: ${stderr}`);
    const killedAt = Date.now();
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const exit = await Promise.race([exited, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), 5000)))]);
    clearTimeout(timer);
    assert.ok(exit, `exited within 5 s of SIGTERM\nstdout: ${stdout}\nstderr: ${stderr}`);
    assert.deepEqual(exit, { code: 0, signal: null }, `stderr: ${stderr}`);
    assert.ok(Date.now() - killedAt < 5000);
    const lines = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg: string; port?: number; signal?: string });
    const msgs = lines.map((l) => l.msg);
    assert.ok(lines.some((l) => l.msg === 'listening' && l.port === port), `listening logged: ${msgs.join(' | ')}`);
    assert.ok(lines.some((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM'), `shutting down logged: ${msgs.join(' | ')}`);
    assert.ok(msgs.indexOf('stopped') > msgs.indexOf('shutting down'), `stopped logged after shutting down: ${msgs.join(' | ')}`);
    assert.equal(await tryConnect(port), 'ECONNREFUSED');
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});
