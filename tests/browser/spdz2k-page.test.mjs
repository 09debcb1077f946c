// A browser page and one server, neither trusting the other (spdz2k): the page's SDK client
// computes as the second party with the single native `ringfence party` of a
// `ringfence local-deployment --parties 1`, makes the preprocessing with it by oblivious
// transfer in WebAssembly, and gets onnxruntime's class for a held-out digit from a logistic
// regression and from the tree ensemble; then with two servers (`--parties 2`), the page the
// third of three parties any two of which may collude against the other. Prints the page's
// setup and online figures.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { referenceSample, startLocalDeployment } from '../../web/examples/local-deployment.mjs';
import { pageTest, setupBrowser } from './harness.mjs';

setupBrowser();

let d;
before(async () => (d = await startLocalDeployment({ parties: 1 })));
after(() => d?.stop());

const hex = (b) => Buffer.from(b).toString('hex');

/** The page's SDK client classifies `models` on deployment `dep` (spdz2k) like onnxruntime. */
async function classifyOnPage(page, dep, models) {
  await page.evaluate(() => window.rf.init());
  for (const [model, k] of models) {
    const { input, expected, runtime } = referenceSample(model, k);
    const c = dep.clientOptions();
    const o = {
      ...c,
      session: hex(c.session),
      parties: c.parties.map(hex),
      keypair: { privateKey: hex(c.keypair.privateKey), publicKey: hex(c.keypair.publicKey) },
      timeoutMs: 120_000,
    };
    const r = await page.evaluate((a) => window.rf.classifyVia(a), {
      o, model, input: Array.from(input), backend: 'spdz2k', output: 'class',
    });
    const servers = dep.publicKeys.length;
    assert.equal(r.class, expected, `${model} #${k} with ${servers} servers: ${runtime} says ${expected}`);
    assert.deepEqual(r.events.map((e) => e[0]), ['connecting', 'request', 'setup', 'online', 'done']);
    // The setup (seconds in the page) said what it was making while it ran.
    assert.ok(r.preprocessing.length > 0, 'no preprocessing reported during the setup');
    for (const p of r.preprocessing) assert.ok(p.making.length > 0 && p.done <= p.total, JSON.stringify(p));
    // The page makes all the preprocessing with the servers (base OTs, OT extension, triples,
    // the comparisons' bits and bit triples, its masks) in the setup: the online phase sends
    // only the protocol's own messages.
    const [setup, online] = [r.sentAt[3] - r.sentAt[2], r.sentAt[4] - r.sentAt[3]];
    assert.ok(setup > 1_000_000 && online > 0 && online * 1000 < setup, `setup ${setup} B, online ${online} B`);
    console.log(
      `spdz2k page + ${servers} server(s), ${model}: setup ${r.timings.setup.toFixed(0)} ms, ${setup} B sent by the page; ` +
        `online ${r.timings.online.toFixed(0)} ms, ${online} B sent by the page, class ${r.class}`,
    );
  }
}

pageTest('spdz2k: a page and one server classify like onnxruntime, the page computing as a party', async (page) => {
  assert.equal(d.publicKeys.length, 1);
  await classifyOnPage(page, d, [['logreg', 2], ['tree', 5]]);
});

pageTest('spdz2k: a page and two servers classify like onnxruntime, the page the third party', async (page) => {
  const two = await startLocalDeployment({ parties: 2 });
  try {
    assert.equal(two.publicKeys.length, 2);
    await classifyOnPage(page, two, [['logreg', 3]]);
  } finally {
    await two.stop();
  }
}, { timeout: 120_000 });
