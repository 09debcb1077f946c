// examples/worker-party in Chromium, served by its own serve.mjs: P0 and P1 in the page and P2
// in a dedicated worker reveal the highest bid per item, equal to plaintext, with no console
// error. (The mechanism — an SDK party in a worker over MessagePortTransport — is tested
// with edge cases in worker.test.mjs; this checks the example as a reader runs it.)
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { serve } from '../../examples/worker-party/serve.mjs';
import { browserTest, setupBrowser } from './harness.mjs';

setupBrowser({ staticServer: false });

let server;
before(async () => (server = await serve()));
after(() => server?.close());

browserTest('worker-party example: a party in a Web Worker computes with two in the page', async (page) => {
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.state !== 'running', null, { timeout: 30_000 });
  assert.equal(await page.getAttribute('body', 'data-state'), 'done', await page.textContent('#result'));
  // The page's bids, from its own text (P0: 120, 40, 7 …): the highest per item in plaintext.
  const bids = (await page.textContent('#bids')).split('\n').map((l) => l.split(': ')[1].split(', ').map(Number));
  const want = bids[0].map((_, item) => Math.max(...bids.map((b) => b[item])));
  assert.deepEqual(JSON.parse(await page.getAttribute('body', 'data-highest')), want);
  assert.equal(await page.getAttribute('body', 'data-worker-realm'), 'DedicatedWorkerGlobalScope');
  assert.match(await page.textContent('#detail'), /revealed the same: true/);
});
