/**
 * The app the channel-bound tests start (abuse, caps, memory): rate limits off, 127.0.0.1 trusted as a proxy
 * so each XffClient is an address of its own, admin token `t`, no demo, and the `stream` bounds under test;
 * plus the two things each test does with it, importing markets and reading a metric.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type App } from '../../../src/node/app.ts';
import { testConfig } from '../../../src/runtime/config.ts';
import { silentLogger } from '../../../src/runtime/log.ts';

export async function startStreamApp(prefix: string, stream: Record<string, number>): Promise<{ app: App; dir: string; base: string }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const app = await startApp(
    testConfig({
      dataDir: dir,
      http: { port: 0, trustedProxies: ['127.0.0.1'] },
      adminToken: 't',
      demo: 'off',
      auth: { signatureThreads: 1 },
      // The connect limit is the HTTP edge's (channels.test.ts); these tests open and reopen at will.
      rateLimits: { enabled: false },
      stream: { idleSeconds: 600, ...stream },
    }),
    { log: silentLogger },
  );
  return { app, dir, base: `http://127.0.0.1:${app.port}` };
}

/** One event holding `markets` (admin import shape), imported and answered 200. */
export async function importEvent(base: string, slug: string, markets: unknown[]): Promise<void> {
  const r = await fetch(`${base}/admin/events`, {
    method: 'POST',
    headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
    body: JSON.stringify([{ title: slug, slug, endDate: '2030-01-01T00:00:00Z', markets }]),
  });
  assert.equal(r.status, 200, await r.text());
}

/** A series' value from /metrics, named with its labels as the text shows them; 0 when absent. */
export async function metric(base: string, series: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}
