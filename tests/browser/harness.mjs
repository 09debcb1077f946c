// Shared by the browser tests: a static server on 127.0.0.1 for the built SDK (web/dist) and
// the test page (page/), headless Debian Chromium driven by playwright-core, and `browserTest`
// (any page) and `pageTest` (the test page), which fail a test on any console error or
// uncaught exception in the page or its workers and save a screenshot to tests/artifacts/.
// `node browser/setup.mjs` (run by `npm test` first) installs what is missing.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../../scripts/lib/chromium.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOTS = { '/dist/': resolve(HERE, '../../web/dist'), '/': join(HERE, 'page') };
export const ARTIFACTS = resolve(HERE, '../artifacts');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm', // what WebAssembly.instantiateStreaming insists on
  '.json': 'application/json',
};

/** Serves ROOTS on 127.0.0.1 (ephemeral port); resolves with `{ url, close }`. */
export async function serve() {
  const server = createServer(async (req, res) => {
    try {
      let path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      if (path.endsWith('/')) path += 'index.html';
      const prefix = Object.keys(ROOTS).find((p) => path.startsWith(p));
      const root = ROOTS[prefix];
      const file = resolve(root, `.${path.slice(prefix.length - 1)}`);
      const type = TYPES[extname(file)];
      // Only known file types, and nothing outside the served directories.
      if (!type || !file.startsWith(root + sep)) throw new Error('not served');
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    close: () => new Promise((ok) => (server.closeAllConnections(), server.close(ok))),
  };
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
    const onConsole = (where) => (msg) => {
      if (msg.type() === 'error' && !expectedErrors.some((re) => re.test(msg.text()))) {
        errors.push(`${where} console.error: ${msg.text()}`);
      }
    };
    page.on('console', onConsole('page'));
    page.on('pageerror', (e) => errors.push(`page exception: ${e.stack ?? e}`));
    page.on('worker', (w) => w.on('console', onConsole('worker')));
    try {
      await fn(page, errors);
    } finally {
      mkdirSync(ARTIFACTS, { recursive: true });
      const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
      // From the top: a page scrolled by the test would show sticky elements out of place.
      await page.evaluate(() => window.scrollTo(0, 0)).catch(() => {});
      await page.screenshot({ path: join(ARTIFACTS, `${slug}.png`), fullPage: true }).catch(() => {});
      await page.close();
    }
    assert.deepEqual(errors, [], 'the page logged errors');
  });
}

/** A test that gets a fresh page with the test page loaded (`window.rf` ready); see {@link browserTest}. */
export function pageTest(name, fn, options) {
  browserTest(
    name,
    async (page, errors) => {
      await page.goto(server.url);
      await page.waitForFunction(() => window.rf, null, { timeout: 10_000 }).catch((e) => {
        throw new Error(`the test page did not load: ${errors.join('\n') || e.message}`);
      });
      await page.evaluate((n) => (document.getElementById('status').textContent = `test: ${n}`), name);
      await fn(page);
    },
    options,
  );
}
