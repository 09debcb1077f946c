// A browser page as one of five servers: P3 serves rss in Chromium beside four native
// `ringfence session-party` processes, through a `ringfence relay` on 127.0.0.1 with Noise links
// end to end, and a Node SDK client among five keys gets onnxruntime's class for a held-out digit.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { Client, generateNoiseKeypair, init, randomSessionId } from 'ringfence';
import { modelPath, referenceSample } from '../../web/examples/local-deployment.mjs';
import { hex, serveModel, startRelay } from '../../web/test/ws-relay.mjs';
import { pageTest, setupBrowser } from './harness.mjs';

setupBrowser();

let relay;
before(async () => {
  await init();
  relay = await startRelay();
});
after(() => relay?.stop());

pageTest('a browser party is P3 of five rss servers and the client gets onnxruntime\'s class', async (page) => {
  await page.evaluate(() => window.rf.init());
  const servers = 5;
  const keypairs = Array.from({ length: servers }, () => generateNoiseKeypair());
  const clientKey = generateNoiseKeypair();
  const sessionId = randomSessionId();
  const natives = serveModel({
    relayUrl: relay.url, model: modelPath('nn-a'), sessionId, keypairs, clientPublicKey: clientKey.publicKey, ids: [0, 1, 2, 4],
  });
  try {
    const publicKeys = [...keypairs.map((k) => hex(k.publicKey)), hex(clientKey.publicKey)];
    const browser = page.evaluate((a) => window.rf.relayServe(a), {
      url: relay.url, session: hex(sessionId), id: 3, privateKey: hex(keypairs[3].privateKey), publicKeys, model: 'nn-a', servers,
    });
    const client = await Client.connect({
      relay: relay.url, session: sessionId, parties: keypairs.map((k) => k.publicKey), keypair: clientKey, timeoutMs: 20_000,
    });
    const digit = referenceSample('nn-a', 13);
    const r = await client.classify('nn-a', digit.input, { output: 'class' });
    client.close();
    assert.deepEqual(r.classes, [digit.expected], `onnxruntime says ${digit.expected}`);
    assert.equal(r.sent.length, servers, 'the client shared its input with all five');
    const served = await browser;
    for (const stage of ['setup', 'online']) {
      const f = served.stages[stage];
      assert.ok(f.bytesSent > 0 && f.rounds > 0, `browser P3 ${stage}: ${JSON.stringify(f)}`);
    }
    for (const o of await natives.done) assert.ok(o.ok, `native P${o.id}: ${o.message}\n${o.stderr}`);
  } finally {
    await natives.stop();
  }
});
