/**
 * The web console's test controls in headless Chromium (console/src/pages/operator.tsx, open-orders.tsx),
 * against one app with the demo catalog and an admin token:
 *   - the operator page shows the test clock running, freezes it, advances it a day with one button and to a
 *     typed time with the form, each move the API's clock too;
 *   - the snapshots beside it: one saved by a button, the clock moved a day, a revert by another button puts
 *     the API's clock and state hash back; deleted by a third;
 *   - an order the admin API placed for demo wallet 1 is marked admin-made in the wallet's open orders, and
 *     one the wallet signed itself is not;
 *   - on a service whose test controls are off the panel says so;
 *   - nothing raised an error or broke the content security policy.
 * Screenshots go to test-results/console-controls/. Without Chromium the suite is skipped with the reason,
 * except under CI, where it fails (test/fixtures/browser.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startApp, type App } from '../../src/node/app.ts';
import { DEMO_WALLETS } from '../../src/demo/catalog.ts';
import type { MarketBook } from '../../src/edge/schemas/catalog.ts';
import { testConfig } from '../../src/runtime/config.ts';
import { silentLogger } from '../../src/runtime/log.ts';
import { buildConsole } from '../../tools/build-console.ts';
import { browserSkip, launchChromium, screenshotDir } from '../fixtures/browser.ts';
import { TestClient, units } from '../fixtures/trading-client.ts';

const ADMIN_TOKEN = 'console-controls-token';
let dir: string;
let consoleDir: string;
let app: App;
let base: string;
let browser: Browser;
let page: Page;
let shots: string;
const pageErrors: string[] = [];

async function admin(method: string, path: string, body?: unknown): Promise<any> {
  const r = await fetch(base + path, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  assert.equal(r.status, 200, `${method} ${path}: ${await r.clone().text()}`);
  return r.json();
}

/** Polled here: the console's content security policy refuses Playwright's eval-based waitForFunction. */
async function until(expression: string, timeout = 10_000): Promise<void> {
  const end = performance.now() + timeout;
  while (!(await page.evaluate(expression))) {
    if (performance.now() > end) throw new Error(`the page never showed: ${expression}\nit shows:\n${String(await page.evaluate("document.querySelector('main').innerText.slice(0, 1500)"))}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const clockNow = () => page.evaluate("Number(document.querySelector('[data-testid=clock-state]').dataset.now)") as Promise<number>;

async function operator(b: string): Promise<void> {
  await page.goto(`${b}/console#/operator`);
  await page.locator('h1').first().waitFor();
  await page.fill('input[name=admin-token]', ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Use token' }).click();
  await page.waitForSelector('[data-testid="admin-token-set"]');
}

describe('the console\'s test controls in headless Chromium', { skip: browserSkip() }, () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pm-console-controls-'));
    consoleDir = join(dir, 'console');
    const [, b] = await Promise.all([buildConsole({ outDir: consoleDir }), launchChromium()]);
    browser = b;
    app = await startApp(
      testConfig({ dataDir: join(dir, 'data'), http: { port: 0 }, demo: 'static', adminToken: ADMIN_TOKEN, auth: { signatureThreads: 1 }, console: { enabled: true, dir: consoleDir } }),
      { log: silentLogger },
    );
    base = `http://127.0.0.1:${app.port}`;
    shots = screenshotDir('console-controls');
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
    // A refused request is logged by the browser as a failed load: the refusals here are the tests' own.
    page.on('console', (m) => {
      if (m.type() === 'error' && !/^Failed to load resource|^WebSocket connection to/.test(m.text())) pageErrors.push(`console: ${m.text()}`);
    });
  });

  after(async () => {
    await browser?.close();
    await app?.stop(1000);
    rmSync(dir, { recursive: true, force: true });
  });

  test('the clock: running, frozen by a button, a day ahead by another, then to a typed time; the API agrees at each step', async () => {
    await operator(base);
    await page.waitForSelector('[data-testid="clock-state"][data-frozen="false"]');
    await page.getByRole('button', { name: 'Freeze', exact: true }).click();
    await page.waitForSelector('[data-testid="clock-state"][data-frozen="true"]');
    const frozenAt = (await admin('GET', '/admin/clock')).nowMs as number;
    assert.equal((await admin('GET', '/admin/clock')).frozen, true);
    await until(`Number(document.querySelector('[data-testid=clock-state]').dataset.now) === ${frozenAt}`);

    await page.getByRole('button', { name: '+1 day', exact: true }).click();
    await page.getByText(/^Advanced to .*timers fired on the way/).waitFor();
    await until(`Number(document.querySelector('[data-testid=clock-state]').dataset.now) === ${frozenAt + 86_400_000}`);
    assert.equal((await admin('GET', '/admin/clock')).nowMs, frozenAt + 86_400_000);

    const target = new Date(Math.ceil((frozenAt + 3 * 86_400_000) / 1000) * 1000).toISOString();
    await page.fill('input[name=advance-to]', target);
    await page.getByRole('button', { name: 'Advance', exact: true }).click();
    await until(`Number(document.querySelector('[data-testid=clock-state]').dataset.now) === ${Date.parse(target)}`);
    assert.equal((await admin('GET', '/admin/clock')).now, target);
    assert.equal(await clockNow(), Date.parse(target));

    await page.fill('input[name=advance-to]', new Date(frozenAt).toISOString());
    await page.getByRole('button', { name: 'Advance', exact: true }).click();
    await page.locator('.error[role=alert] p').getByText(/only moves forward/).waitFor();
    await page.screenshot({ path: join(shots, 'clock.png'), fullPage: true });

    await page.getByRole('button', { name: 'Let it run', exact: true }).click();
    await page.waitForSelector('[data-testid="clock-state"][data-frozen="false"]');
  });

  test('the snapshots beside the clock: saved by a button, the clock moved, reverted by another; the API agrees', { timeout: 60_000 }, async () => {
    // The token is kept in page memory: the page the clock's test left is the operator's, token set.
    if ((await page.locator('[data-testid="admin-token-set"]').count()) === 0) await operator(base);
    await page.getByRole('button', { name: 'Freeze', exact: true }).click();
    await page.waitForSelector('[data-testid="clock-state"][data-frozen="true"]');
    const saved = (await admin('GET', '/admin/clock')).nowMs as number;
    const hash = (await admin('GET', '/admin/state-hash')).stateHash as string;
    await page.fill('input[name=snapshot-name]', 'console-saved');
    await page.getByRole('button', { name: 'Save snapshot', exact: true }).click();
    await page.getByText(/^Saved console-saved at journal seq \d+/).waitFor();
    await page.waitForSelector('[data-testid=snapshots] tr[data-snapshot="console-saved"]');
    assert.deepEqual((await admin('GET', '/admin/snapshots')).snapshots.map((s: any) => s.name), ['console-saved']);

    await page.getByRole('button', { name: '+1 day', exact: true }).click();
    await until(`Number(document.querySelector('[data-testid=clock-state]').dataset.now) === ${saved + 86_400_000}`);
    await page.locator('[data-testid=snapshots] tr[data-snapshot="console-saved"]').getByRole('button', { name: 'Revert', exact: true }).click();
    await page.getByText(/^Reverted to console-saved \(journal seq \d+\) in \d+ ms/).waitFor({ timeout: 30_000 });
    assert.equal((await admin('GET', '/admin/clock')).nowMs, saved, 'the clock is back where the snapshot stood');
    assert.equal((await admin('GET', '/admin/state-hash')).stateHash, hash);
    await until(`Number(document.querySelector('[data-testid=clock-state]').dataset.now) === ${saved}`);
    await page.screenshot({ path: join(shots, 'snapshots.png'), fullPage: true });

    await page.locator('[data-testid=snapshots] tr[data-snapshot="console-saved"]').getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText(/^Deleted console-saved/).waitFor();
    assert.deepEqual((await admin('GET', '/admin/snapshots')).snapshots, []);
    await page.getByRole('button', { name: 'Let it run', exact: true }).click();
    await page.waitForSelector('[data-testid="clock-state"][data-frozen="false"]');
  });

  test('an order the admin API placed for the wallet is marked admin-made in its open orders; its own is not', async () => {
    const markets = (await (await fetch(`${base}/markets`)).json()) as { data: MarketBook[] };
    const m = markets.data.find((x) => x.active && x.accepting_orders && !x.closed && !x.neg_risk && x.minimum_tick_size === 0.01)!;
    const demo1 = DEMO_WALLETS[0];
    const made = await admin('POST', '/admin/orders', { wallet: demo1.address, tokenId: m.tokens[0].token_id, side: 'BUY', price: '0.11', size: '10' });
    const own = new TestClient(base, demo1.privateKey as `0x${string}`, await TestClient.info(base));
    await own.createKey();
    const signed = await own.place({ tokenId: m.tokens[0].token_id, side: 'BUY', makerAmount: units(1.2), takerAmount: units(10) });
    assert.equal(signed.body.status, 'live');

    await page.goto(`${base}/console#/market/${m.market_slug}`);
    await page.locator('h1').first().waitFor();
    await page.selectOption('select[name=wallet]', { label: 'Demo wallet 1 (test key)' });
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await page.waitForSelector(`table.orders tr[data-order-id="${made.orderID}"]`);
    await page.waitForSelector(`table.orders tr[data-order-id="${signed.body.orderID}"]`);
    assert.equal(await page.locator(`table.orders tr[data-order-id="${made.orderID}"] .admin-made`).count(), 1);
    assert.equal(await page.locator(`table.orders tr[data-order-id="${signed.body.orderID}"] .admin-made`).count(), 0);
    await page.screenshot({ path: join(shots, 'admin-made.png'), fullPage: true });
  });

  test('on a service whose test controls are off, the clock and snapshot panels say so', async () => {
    const off = await startApp(
      testConfig({ dataDir: join(dir, 'off'), http: { port: 0 }, demo: 'off', adminToken: ADMIN_TOKEN, auth: { signatureThreads: 1 }, console: { enabled: true, dir: consoleDir }, sandbox: { testControls: 'off' } }),
      { log: silentLogger },
    );
    try {
      await operator(`http://127.0.0.1:${off.port}`);
      await page.getByText('The test controls are off on this service').first().waitFor();
      assert.equal(await page.getByText('The test controls are off on this service').count(), 2, 'the clock and the snapshots panels say so');
    } finally {
      await off.stop(1000);
    }
  });

  test('nothing the pages did raised an error or broke the content security policy', () => {
    assert.deepEqual(pageErrors, []);
  });
});
