// Failures in the browser end in a RingfenceError with a stable code, not a hang: an aborted
// signal while waiting on a silent peer (ABORTED), and a peer whose worker was terminated
// mid-session (TIMEOUT). A peer that never joins a relay session is in mixed.test.mjs.
import assert from 'node:assert/strict';
import { pageTest, setupBrowser } from './harness.mjs';

setupBrowser();

pageTest('aborting a party that waits on a silent peer rejects with ABORTED', async (page) => {
  await page.evaluate(() => window.rf.init());
  const { err, ms } = await page.evaluate((args) => window.rf.abortWaiting(args), { afterMs: 100 });
  assert.ok(err, 'the operation must fail');
  assert.equal(err.ringfence, true, err.message);
  assert.equal(err.code, 'ABORTED', err.message);
  assert.equal(err.causeIsReason, true, 'cause is the signal reason');
  // The abort fires 100 ms in; without it the wait would never end (no timeout).
  assert.ok(ms >= 90 && ms < 1000, `rejected after ${ms} ms`);
});

pageTest('a peer whose worker is terminated mid-session gives TIMEOUT naming it', async (page) => {
  await page.evaluate(() => window.rf.init());
  const { joined, err, ms } = await page.evaluate((args) => window.rf.workerVanishes(args), { timeoutMs: 500 });
  assert.deepEqual(joined, { joined: true }, 'the worker party joined first');
  assert.ok(err, 'the operation must fail');
  assert.equal(err.ringfence, true, err.message);
  assert.equal(err.code, 'TIMEOUT', err.message);
  assert.equal(err.peer, 2);
  assert.ok(ms >= 450 && ms < 3000, `rejected after ${ms} ms`);
});
