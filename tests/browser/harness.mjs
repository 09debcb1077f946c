// Shared by the browser tests: a static server on 127.0.0.1 for the built SDK (web/dist), the
// shipped models (models/) and the test page (page/), headless Debian Chromium driven by
// playwright-core, and `browserTest` (any page), `pageTest` (the test page) and `pagesTest`
// (several test pages, one browser context each), which fail a test on any console error or
// uncaught exception in the pages or their workers and save screenshots to tests/artifacts/.
// `node browser/setup.mjs` (run by `npm test` first) installs what is missing.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../../scripts/lib/chromium.mjs';
import { serveStatic } from '../../scripts/lib/static-server.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOTS = { '/dist/': resolve(HERE, '../../web/dist'), '/models/': resolve(HERE, '../../models'), '/': join(HERE, 'page') };
export const ARTIFACTS = resolve(HERE, '../artifacts');

/** Serves ROOTS on 127.0.0.1 (ephemeral port); resolves with `{ url, close }`. */
export function serve() {
  return serveStatic(ROOTS, {
    types: { '.json': 'application/json', '.onnx': 'application/octet-stream', '.rfshape': 'application/octet-stream' },
    headers: { 'cache-control': 'no-store' },
  });
}

let server;
let browser;

/**
 * Starts the browser (and, unless `staticServer` is false, the static server of the test page)
 * before this file's tests, stops them after.
 */
export function setupBrowser({ staticServer = true } = {}) {
  before(async () => {
    if (staticServer) server = await serve();
    browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
}

/**
 * A test that gets a fresh page (`viewport` as Playwright takes it) and runs `fn(page, errors)`
 * (`errors`: what has been caught so far, for failure messages).
 * Console errors and uncaught exceptions of the page and its workers fail it, except console
 * errors matching one of `expectedErrors` (regexps: what a test provokes on purpose); a
 * screenshot of the whole page goes to tests/artifacts/NAME.png either way.
 */
export function browserTest(name, fn, { timeout = 60_000, viewport, expectedErrors = [] } = {}) {
  test(name, { timeout }, async () => {
    const page = await browser.newPage(viewport ? { viewport } : {});
    const errors = [];
    watch(page, 'page', errors, expectedErrors);
    try {
      await fn(page, errors);
    } finally {
      await screenshot(page, slugOf(name));
      await page.close();
    }
    assert.deepEqual(errors, [], 'the page logged errors');
  });
}

/** Collects the console errors (but `expectedErrors`) and uncaught exceptions of `page` and its workers. */
function watch(page, where, errors, expectedErrors) {
  const onConsole = (from) => (msg) => {
    if (msg.type() === 'error' && !expectedErrors.some((re) => re.test(msg.text()))) {
      errors.push(`${from} console.error: ${msg.text()}`);
    }
  };
  page.on('console', onConsole(where));
  page.on('pageerror', (e) => errors.push(`${where} exception: ${e.stack ?? e}`));
  page.on('worker', (w) => w.on('console', onConsole(`${where} worker`)));
}

const slugOf = (name) => name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

async function screenshot(page, slug) {
  mkdirSync(ARTIFACTS, { recursive: true });
  // From the top: a page scrolled by the test would show sticky elements out of place.
  await page.evaluate(() => window.scrollTo(0, 0)).catch(() => {});
  await page.screenshot({ path: join(ARTIFACTS, `${slug}.png`), fullPage: true }).catch(() => {});
}

/** Loads the test page in `page` and waits for `window.rf`; labels it with `status`. */
async function openTestPage(page, status, errors) {
  await page.goto(server.url);
  await page.waitForFunction(() => window.rf, null, { timeout: 10_000 }).catch((e) => {
    throw new Error(`the test page did not load: ${errors.join('\n') || e.message}`);
  });
  await page.evaluate((s) => (document.getElementById('status').textContent = s), status);
}

/**
 * A test that gets `count` test pages, each in its own browser context (its own storage, like
 * separate users), and runs `fn(pages, errors)`; errors and screenshots as {@link browserTest}
 * (tests/artifacts/NAME-I.png).
 */
export function pagesTest(name, count, fn, { timeout = 60_000, expectedErrors = [] } = {}) {
  test(name, { timeout }, async () => {
    const contexts = await Promise.all(Array.from({ length: count }, () => browser.newContext()));
    const errors = [];
    try {
      const pages = await Promise.all(contexts.map((c) => c.newPage()));
      pages.forEach((page, i) => watch(page, `page ${i}`, errors, expectedErrors));
      await Promise.all(pages.map((page, i) => openTestPage(page, `test: ${name} (page ${i})`, errors)));
      try {
        await fn(pages, errors);
      } finally {
        await Promise.all(pages.map((page, i) => screenshot(page, `${slugOf(name)}-${i}`)));
      }
    } finally {
      await Promise.all(contexts.map((c) => c.close()));
    }
    assert.deepEqual(errors, [], 'the pages logged errors');
  });
}

/** A test that gets a fresh page with the test page loaded (`window.rf` ready); see {@link browserTest}. */
export function pageTest(name, fn, options) {
  browserTest(
    name,
    async (page, errors) => {
      await openTestPage(page, `test: ${name}`, errors);
      await fn(page);
    },
    options,
  );
}
