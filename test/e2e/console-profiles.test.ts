/**
 * The web console under every profile (PROFILE: spec, clob-v2, platform), in headless Chromium: the page
 * signs under whatever domains GET /exchange-info publishes (the platform's test chain, its mainnet, this
 * exchange's own), and the wallet's open-orders table shows every column (size, filled, type, placed) whether
 * GET /data/orders answers the spec's OrderView or the platform client's OpenOrder (console/src/orders.ts).
 * Each profile's app starts with the demo catalog and funded demo wallets (`demo: 'static'`); one console
 * build and one browser serve all three. The console's other pages and flows: test/e2e/console.test.ts.
 * Without Chromium the suite is skipped with the reason, except under CI (test/fixtures/browser.ts).
 */
import assert from 'node:assert/strict';
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
import { tempDir } from '../fixtures/temp-dirs.ts';

const PROFILES = [
  { profile: 'spec', chainId: 31337001, shape: 'originalSize' },
  { profile: 'clob-v2', chainId: 80002, shape: 'original_size' },
  { profile: 'platform', chainId: 137, shape: 'original_size' },
] as const;

let dir: string;
let consoleDir: string;
let browser: Browser;
const pageErrors: string[] = [];

describe('the web console under each profile', { skip: browserSkip() }, () => {
  before(async () => {
    dir = tempDir('pm-console-profiles-');
    consoleDir = join(dir, 'console');
    const [, b] = await Promise.all([buildConsole({ outDir: consoleDir }), launchChromium()]);
    browser = b;
  });

  after(async () => {
    await browser?.close();
  });

  for (const p of PROFILES) {
    test(`PROFILE=${p.profile}: the ticket signs for chain ${p.chainId}, and the open-orders table shows size, filled, type and placed`, async () => {
      const app: App = await startApp(
        testConfig({ profile: p.profile, dataDir: join(dir, p.profile), http: { port: 0 }, demo: 'static', auth: { signatureThreads: 1 }, console: { enabled: true, dir: consoleDir } }),
        { log: silentLogger },
      );
      const page: Page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      page.on('pageerror', (e) => pageErrors.push(`${p.profile} pageerror: ${e.message}`));
      try {
        const base = `http://127.0.0.1:${app.port}`;
        const info = (await (await fetch(`${base}/exchange-info`)).json()) as { chainId: number; profile: string };
        assert.deepEqual([info.profile, info.chainId], [p.profile, p.chainId]);
        const markets = ((await (await fetch(`${base}/markets`)).json()) as { data: MarketBook[] }).data;
        const m = markets.find((x) => x.active && x.accepting_orders && !x.closed && !x.neg_risk && x.minimum_tick_size === 0.01 && x.minimum_order_size <= 5)!;
        assert.ok(m, 'an open binary market with a 0.01 tick');

        await page.goto(`${base}/console#/market/${m.market_slug}`);
        await page.waitForSelector('[data-channel="Market channel"][data-status="live"]');
        await page.selectOption('select[name=wallet]', { label: 'Demo wallet 1 (test key)' });
        await page.getByRole('button', { name: 'Connect', exact: true }).click();
        await page.waitForSelector(`.wallet-connected[data-address="${DEMO_WALLETS[0].address}"]`);
        await page.locator('input[name=price]').fill('0.3');
        await page.locator('input[name=size]').fill('7');
        await page.locator('input[name=size]').press('Enter');
        const placed = page.locator('.note[data-order-id]');
        await placed.waitFor();
        const orderId = (await placed.getAttribute('data-order-id'))!;

        // GET /data/order answers this profile's shape; the table reads either.
        const stored = (await (await fetch(`${base}/data/order/${orderId}`)).json()) as Record<string, unknown>;
        assert.ok(p.shape in (p.shape === 'originalSize' ? (stored.order as Record<string, unknown>) : stored), `GET /data/order answers ${p.shape}`);
        const row = page.locator(`table.orders tr[data-order-id="${orderId}"]`);
        await row.waitFor();
        const cells = (await row.locator('td').allTextContents()).map((c) => c.trim());
        assert.deepEqual(cells.slice(0, 6), ['BUY', m.tokens[0]!.outcome, '0.30', '7', '0', 'GTC'], cells.join(' | '));
        assert.match(cells[6]!, /^\d{2}:\d{2}:\d{2}$/, `placed: ${cells[6]}`);
        await page.screenshot({ path: join(screenshotDir('console'), `profile-${p.profile}-1280.png`), fullPage: true });

        await row.locator('button').click();
        await page.waitForSelector(`table.orders tr[data-order-id="${orderId}"]`, { state: 'detached' });
      } finally {
        await page.close();
        await app.stop();
      }
    });
  }

  test('nothing the pages did raised an error', () => {
    assert.deepEqual(pageErrors, []);
  });
});
