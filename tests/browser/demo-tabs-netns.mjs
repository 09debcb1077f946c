// The demo app's "three tabs" deployment, driven as a user would (demo-tabs.test.mjs runs this
// file inside a private network namespace): choosing it and classifying opens three party
// windows, each one compute party linked to the other two over WebRTC DataChannels and to the
// demo page's client through the relay of the demo's local deployment. A shipped MNIST digit on
// LeNet (METEOR) must show onnxruntime's class, every link between the parties must be WebRTC,
// and each party window must show what it received of the input: exactly what the demo page
// says it sent that party (noise). A second classification (an 8×8 digit on the decision tree,
// rep3, where each party gets a different share) is served by the same windows. Where the
// browser opens one window per click (as Chromium does outside Playwright), the page names the
// parties left to open and the classification goes on once the user opened them.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { startDemoServer } from '../../examples/demo/server/start.mjs';
import { referenceSample } from '../../web/examples/local-deployment.mjs';
import { assertServerViews, classify, openDemo, outcome, productShot } from './demo-app.mjs';
import { ARTIFACTS, browserTest, setupBrowser } from './harness.mjs';
import { assertInNetns } from './netns.mjs';

// ICE gathers every interface it sees: never run where a real one is.
assertInNetns(import.meta.url);

setupBrowser({ staticServer: false });

let demo;
before(async () => (demo = await startDemoServer({ port: 0 })));
after(() => demo?.close());

/** The pixels of canvas `selector` (the `index`-th match) in `page`, as one string. */
const pixels = (page, selector, index = 0) =>
  page.$$eval(selector, (cs, i) => {
    const c = cs[i];
    return `${c.width}x${c.height}:${Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data).join(',')}`;
  }, index);

/** The windows `page` opens, as they open; their console errors and exceptions go to `errors`. */
function watchPopups(page, errors) {
  const popups = [];
  page.on('popup', (p) => {
    popups.push(p);
    const where = `party window ${popups.length - 1}`;
    p.on('console', (m) => m.type() === 'error' && errors.push(`${where} console.error: ${m.text()}`));
    p.on('pageerror', (e) => errors.push(`${where} exception: ${e.stack ?? e}`));
  });
  return popups;
}

/** What each party window shows, and the errors so far: for failure messages. */
async function windowStates(popups, errors) {
  const states = await Promise.all(
    popups.map((p) =>
      p.evaluate(() => `${document.body.dataset.state}: ${document.getElementById('status-text')?.textContent} ${document.getElementById('error')?.textContent}`)
        .catch((e) => `not readable (${e.message})`)
        .then((s) => `${p.url()}: ${s}`),
    ),
  );
  return [`party windows:`, ...states, 'errors:', ...errors].join('\n');
}

/** The party windows, by party, once the page opened all three. */
async function partyWindows(popups) {
  const byParty = [];
  for (const p of popups) {
    await p.waitForLoadState();
    byParty[Number(new URL(p.url()).searchParams.get('party'))] = p;
  }
  assert.deepEqual(Object.keys(byParty), ['0', '1', '2'], `one window per party: ${popups.map((p) => p.url()).join(', ')}`);
  return byParty;
}

/** Checks each party window served over WebRTC and shows what the demo page sent it. */
async function assertPartyWindows(page, windows) {
  for (const [id, w] of windows.entries()) {
    await w.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.state), null, { timeout: 10_000 });
    const alert = w.locator('#error');
    if (await alert.isVisible()) assert.fail(`P${id}'s window shows an error: ${await alert.textContent()}`);
    const links = await w.$$eval('#links li', (lis) => lis.map((li) => li.dataset.kind));
    assert.deepEqual(links, ['webrtc', 'webrtc', 'relay'], `P${id}: DataChannels to both parties, the client through the relay`);
    assert.equal(await pixels(w, '#view'), await pixels(page, '#out-servers canvas', id), `P${id}'s window shows what the page sent it`);
  }
}

browserTest('demo: three party tabs classify shipped digits over WebRTC with onnxruntime class', async (page, errors) => {
  // The party windows are pages of this page's context: their errors fail the test too.
  const popups = watchPopups(page, errors);
  await openDemo(page, demo.url);
  await page.click('#deployments [data-value="tabs"]');
  assert.ok(await page.isVisible('#tabs-card'), 'the party tabs card is shown');

  await page.click('#models [data-value="lenet"]');
  await page.click('#backends [data-value="meteor"]');
  const k = 8;
  await page.click(`#strip [data-index="${k}"]`);
  const shown = await classify(page, { timeout: 120_000 }).catch(async (e) => assert.fail(`${e.message}\n${await windowStates(popups, errors)}`));
  assert.equal(shown, referenceSample('lenet', k).expected, "the page shows onnxruntime's class");
  assert.equal(await page.getAttribute('#out-transport', 'data-kind'), 'webrtc', await page.textContent('#out-transport'));
  await assertServerViews(page, 28);
  const rows = await page.$$eval('#out-bytes tbody th', (ths) => ths.map((th) => th.firstChild.textContent));
  assert.deepEqual(rows, ['This tab, the client', "P0's tab", "P1's tab", "P2's tab"], 'figures of the client and of the three party tabs');
  const windows = await partyWindows(popups);
  await assertPartyWindows(page, windows);
  assert.deepEqual(await page.$$eval('#party-tabs li', (lis) => lis.map((li) => li.className)), ['open', 'open', 'open']);
  await productShot(page, join(ARTIFACTS, 'demo-tabs.png'));
  for (const [id, w] of windows.entries()) await w.screenshot({ path: join(ARTIFACTS, `demo-tabs-p${id}.png`), fullPage: true });

  // Again, in the same windows: rep3 gives each party a share of its own.
  await page.click('#models [data-value="tree"]');
  await page.click('#backends [data-value="rep3"]');
  const j = 3;
  await page.click(`#strip [data-index="${j}"]`);
  assert.equal(await classify(page, { timeout: 60_000 }), referenceSample('tree', j).expected, "the tree's class, as onnxruntime gives it");
  assert.equal(popups.length, 3, 'the open party windows served again: none was opened anew');
  await assertServerViews(page, 8);
  await assertPartyWindows(page, windows);
}, { viewport: { width: 1360, height: 900 }, timeout: 360_000 });

browserTest('demo: where the browser opens one window per click, the page says which party tabs to open and then classifies', async (page, errors) => {
  // Playwright turns Chromium's pop-up blocker off; this is what it does otherwise.
  await page.addInitScript(() => {
    const open = window.open.bind(window);
    let clicked = false;
    window.open = (...args) => {
      if (clicked) return null;
      clicked = true;
      setTimeout(() => (clicked = false));
      return open(...args);
    };
  });
  const popups = watchPopups(page, errors);
  await openDemo(page, demo.url);
  await page.click('#deployments [data-value="tabs"]');
  await page.click('#models [data-value="tree"]');
  const k = 3;
  await page.click(`#strip [data-index="${k}"]`);
  await page.click('#classify');
  const notice = page.locator('#tabs-blocked');
  await notice.waitFor({ state: 'visible' });
  assert.match(await notice.textContent(), /open P1 and P2 with their Open links above/);
  for (const p of [1, 2]) await page.click(`#party-tabs li[data-party="${p}"] a`);
  const shown = await outcome(page, { timeout: 60_000 }).catch(async (e) => assert.fail(`${e.message}\n${await windowStates(popups, errors)}`));
  assert.equal(shown, referenceSample('tree', k).expected, "the tree's class, as onnxruntime gives it");
  assert.ok(await notice.isHidden(), 'the notice goes once the tabs are open');
  assert.equal(popups.length, 3);
  await assertPartyWindows(page, await partyWindows(popups));
}, { viewport: { width: 1360, height: 900 }, timeout: 240_000 });
