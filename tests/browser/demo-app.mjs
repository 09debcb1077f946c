// Driving the demo app (examples/demo) in a Playwright page, for the demo's browser tests
// (demo.test.mjs, demo-tabs-netns.mjs): loading it, classifying, and checking what it shows.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

/** axe-core's browser bundle, injected into the page by {@link assertAccessible}. */
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** Why a demo page opened at `started` is not ready: its dataset and status line, the requests
 * in `pending` (request → when sent) and the `consoleTail`. */
async function notReady(page, error, started, pending, consoleTail) {
  const now = Date.now();
  const seen = await page
    .evaluate(() => `${JSON.stringify({ ...document.body.dataset })}, runtime "${document.getElementById('runtime')?.textContent ?? ''}"`)
    .catch((err) => `not readable (${err.message})`);
  const waiting = [...pending].map(([r, t]) => `  ${r.method()} ${r.url()} (for ${now - t} ms)`);
  return [
    `the demo page was not ready ${now - started} ms after it was opened: ${error.message.split('\n')[0]}`,
    `page: ${seen}`,
    'requests not answered:', ...(waiting.length ? waiting : ['  none']),
    'last console lines:', ...(consoleTail.length ? consoleTail : ['  none']),
  ].join('\n');
}

/**
 * Loads the app at `url` and waits until the SDK and the test digits are ready. When the page
 * is not ready within `timeout` ms, the failure says what it was still doing: its state and
 * status line, the requests it had not had answered (with their age), and its last console lines.
 */
export async function openDemo(page, url, { timeout = 150_000 } = {}) {
  const pending = new Map();
  const consoleTail = [];
  const started = Date.now();
  const onRequest = (r) => pending.set(r, Date.now());
  const onDone = (r) => pending.delete(r);
  const onConsole = (m) => {
    consoleTail.push(`+${Date.now() - started} ms ${m.type()}: ${m.text()}`.slice(0, 300));
    if (consoleTail.length > 20) consoleTail.shift();
  };
  page.on('request', onRequest);
  page.on('requestfinished', onDone);
  page.on('requestfailed', onDone);
  page.on('console', onConsole);
  try {
    await page.goto(url, { timeout });
    // Generous: a first load on a clean checkout has Vite optimise and compile the app while the
    // "3 servers" deployment starts and makes setup runs, all on the same cores.
    const left = Math.max(1_000, timeout - (Date.now() - started));
    await page
      .waitForFunction(() => ['idle', 'error'].includes(document.body.dataset.state), null, { timeout: left })
      .catch(async (e) => assert.fail(await notReady(page, e, started, pending, consoleTail)));
  } finally {
    page.off('request', onRequest);
    page.off('requestfinished', onDone);
    page.off('requestfailed', onDone);
    page.off('console', onConsole);
  }
  await assertNoAlert(page);
}

export async function assertNoAlert(page) {
  const alert = page.locator('#error');
  if (await alert.isVisible()) assert.fail(`the page shows an error: ${await alert.textContent()}`);
}

/** Clicks Classify and waits for the outcome (`timeout` ms at most); returns the class the page shows. */
export async function classify(page, options) {
  await page.click('#classify');
  return outcome(page, options);
}

/**
 * Waits for the classification under way to end, and for the servers' own figures that follow
 * its answer (`timeout` ms at most); returns the class the page shows.
 */
export async function outcome(page, { timeout = 30_000 } = {}) {
  await page.waitForFunction(
    () => ['done', 'error'].includes(document.body.dataset.state) && document.body.dataset.figures !== 'pending',
    null,
    { timeout },
  );
  await assertNoAlert(page);
  const stages = await page.$$eval('#stages li', (lis) => lis.map((li) => `${li.dataset.stage}:${li.className}`));
  assert.deepEqual(stages, ['connecting', 'request', 'setup', 'online', 'done'].map((s) => `${s}:done`));
  return Number(await page.getAttribute('#out-class', 'data-class'));
}

/**
 * Checks the three server views: canvases of `side × side` pixels, each far from the input
 * (noise: the pixels' grey levels spread over the whole range, unlike a digit's background).
 */
export async function assertServerViews(page, side) {
  const views = await page.$$eval('#out-servers canvas', (canvases) =>
    canvases.map((c) => {
      const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const grey = Array.from({ length: px.length / 4 }, (_, i) => px[i * 4]);
      const mean = grey.reduce((a, b) => a + b, 0) / grey.length;
      const sd = Math.sqrt(grey.reduce((a, b) => a + (b - mean) ** 2, 0) / grey.length);
      return { w: c.width, h: c.height, mean, sd, visible: c.getBoundingClientRect().width > 0 };
    }),
  );
  assert.equal(views.length, 3, 'one view per server party');
  for (const [i, v] of views.entries()) {
    assert.deepEqual([v.w, v.h, v.visible], [side, side, true], `server P${i}'s view is a shown ${side}×${side} image`);
    // Uniform bytes: mean ≈ 127.5, sd ≈ 73.6; a digit is mostly blank paper.
    assert.ok(v.mean > 90 && v.mean < 165 && v.sd > 50, `server P${i}'s view looks like noise (mean ${v.mean}, sd ${v.sd})`);
  }
}

/**
 * Waits until the "3 servers" deployment of the demo at `url` has a setup run of `model` on
 * `backend` made ahead at all three servers (its parties' `prepared` events), so that the next
 * classification of `model` on `backend` takes it.
 */
export async function waitPrepared(url, model, backend = 'meteor') {
  const res = await fetch(new URL(`api/servers?ready=${model}&backend=${backend}`, url));
  const body = await res.json();
  assert.equal(res.status, 200, `no run of ${model} made ahead: ${JSON.stringify(body)}`);
  assert.equal(body.mesh, 'up', `the servers' mesh is up (${JSON.stringify(body)})`);
  return body;
}

/**
 * What the page says of the last classification's setup: `{ ahead, stage, row }`, `ahead`
 * whether it says the servers made it ahead of demand (the stage and the time table agree), and
 * the texts of the stage's time and of the time table's setup row.
 */
export async function setupShown(page) {
  const stage = page.locator('#stages li[data-stage="setup"]');
  const row = page.locator('#out-times tr[data-row="setup"]');
  const ahead = (await stage.getAttribute('data-ahead')) === 'true';
  assert.equal((await row.getAttribute('data-ahead')) === 'true', ahead, 'the stage and the time table agree');
  return { ahead, stage: await stage.locator('.time').textContent(), row: await row.textContent() };
}

/**
 * Runs axe-core's WCAG 2.0 and 2.1 A and AA rules on `page` (`when`: for the message); fails
 * with every violation, where it is and why.
 */
export async function assertAccessible(page, when) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    const tags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
    const { violations: found } = await window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return found.flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(' ')}: ${n.failureSummary.replace(/\s+/g, ' ')}`));
  });
  assert.deepEqual(violations, [], `axe-core finds no WCAG 2 A/AA violation ${when}`);
}

/**
 * Checks that `selector` is within the window when the page is scrolled to the top, and is
 * what the window shows at its centre (not under another element).
 */
export async function assertInFirstViewport(page, selector) {
  await page.evaluate(() => window.scrollTo(0, 0));
  const { width, height } = page.viewportSize();
  const box = await page.locator(selector).boundingBox();
  assert.ok(box, `${selector} is shown`);
  const where = `${selector} at x ${box.x}..${box.x + box.width}, y ${box.y}..${box.y + box.height} in ${width}×${height}`;
  assert.ok(box.x >= 0 && box.y >= 0 && box.x + box.width <= width && box.y + box.height <= height, `${where}: within the first screen`);
  const onTop = await page.evaluate(
    ([sel, x, y]) => document.querySelector(sel)?.contains(document.elementFromPoint(x, y)) ?? false,
    [selector, box.x + box.width / 2, box.y + box.height / 2],
  );
  assert.ok(onTop, `${where}: not covered by another element`);
}

/**
 * A screenshot of the whole page at `path`, taken in a window as tall as the page: the action
 * bar then sits in its place under the settings, not over them at a shorter window's bottom edge.
 */
export async function productShot(page, path) {
  const size = page.viewportSize();
  await page.setViewportSize({ ...size, height: await page.evaluate(() => document.documentElement.scrollHeight) });
  await page.screenshot({ path });
  await page.setViewportSize(size);
}
