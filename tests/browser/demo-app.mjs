// Driving the demo app (examples/demo) in a Playwright page, for the demo's browser tests
// (demo.test.mjs, demo-tabs-netns.mjs): loading it, classifying, and checking what it shows.
import assert from 'node:assert/strict';

/** Loads the app at `url` and waits until the SDK and the test digits are ready. */
export async function openDemo(page, url) {
  await page.goto(url);
  // Generous: the first load has Vite compile the app, which takes long on a loaded machine.
  await page.waitForFunction(() => ['idle', 'error'].includes(document.body.dataset.state), null, { timeout: 60_000 });
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

/** Waits for the classification under way to end (`timeout` ms at most); returns the class the page shows. */
export async function outcome(page, { timeout = 30_000 } = {}) {
  await page.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.state), null, { timeout });
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
