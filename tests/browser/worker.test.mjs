// P2 in a dedicated module worker that loads the SDK itself, P0 and P1 in the page, linked by
// the SDK's MessagePortTransport: all three reveal results equal to plaintext.
import assert from 'node:assert/strict';
import { pageTest, setupBrowser } from './harness.mjs';

setupBrowser();

const MIN = -(1n << 63n);
const MAX = (1n << 63n) - 1n;
const wrap = (x) => BigInt.asIntN(64, x);

pageTest('a party in a Web Worker computes with two parties in the page', async (page) => {
  await page.evaluate(() => window.rf.init());
  const inputs = [
    [0n, 1n, -1n, MIN, MAX, 3n, -123456789012345n, 42n],
    [MAX, -1n, -1n, MIN, 2n, 5n, 987654321n, -42n],
    [1n, 0n, MIN, MAX, MAX, 3n, 0n, 43n],
  ];
  const { outs, realm, error } = await page.evaluate((args) => window.rf.withWorker(args), { inputs });
  assert.equal(error, undefined, error?.message);
  assert.equal(realm, 'DedicatedWorkerGlobalScope', 'P2 ran in a worker');
  const [x, y, z] = inputs;
  const want = {
    mul: x.map((v, i) => wrap(v * y[i])),
    lt: x.map((v, i) => (v < z[i] ? 1 : 0)),
    relu: z.map((v, i) => {
      const d = wrap(v - y[i]);
      return d > 0n ? d : 0n;
    }),
  };
  for (const [id, out] of outs.entries()) assert.deepEqual(out, want, `P${id}`);
});
