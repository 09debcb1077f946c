// The browser-to-native WebRTC tests proper, which webrtc-native.test.mjs runs inside a private
// network namespace (netns.mjs: loopback and a veth pair that exists nowhere else). A page is
// one compute party over the SDK's RtcTransport; two native processes are the others, speaking
// the same signalling inside their Noise links through the relay (on 127.0.0.1) and binding
// UDP only on 10.200.0.2, the namespace's own veth address. Where each pair's frames went is
// what the transports themselves report (the page's `via`, the natives' `links`).
import assert from 'node:assert/strict';
import { Client, generateNoiseKeypair } from 'ringfence';
import { modelPath, referenceSample, serveModel } from '../../web/examples/local-deployment.mjs';
import { checkPlaintext, hex, runParty, relayForTests } from '../../web/test/ws-relay.mjs';
import { pageTest, setupBrowser } from './harness.mjs';
import { assertInNetns } from './netns.mjs';

// ICE gathers every interface it sees: never run where a real one is.
assertInNetns(import.meta.url);

setupBrowser();

/** The only address the native parties bind UDP on (their sole candidate). */
const NATIVE_UDP = '10.200.0.2';
const MIN = -(1n << 63n);
const MAX = (1n << 63n) - 1n;

const relay = relayForTests();

/**
 * P0 in the page (RtcTransport), P1 and P2 native `interop-party` processes with `webrtc[i]`
 * as their --webrtc value: the product x0·x1 of edge values, x0 < x1 and a 3×3 matmul, checked
 * against plaintext at all three; returns the page's and the natives' link reports.
 */
async function checkProgram(page, webrtc) {
  await page.evaluate(() => window.rf.init());
  const keys = await page.evaluate(() => window.rf.noiseKeys());
  const publicKeys = keys.map((k) => k.publicKey);
  const d = 3;
  // Every pair of {0, ±1, min, max} meets in x0·x1.
  const inputs = [
    [0n, 1n, -1n, MIN, MAX, MIN, MAX, -1n, 1n],
    [MAX, MIN, -1n, MIN, MAX, 1n, -1n, 0n, MIN],
    [1n, 2n, 3n, -4n, MAX, -6n, 7n, MIN, 1n << 62n],
  ];
  const session = hex(crypto.getRandomValues(new Uint8Array(16)));
  const natives = [1, 2].map((id) =>
    runParty(
      ['--relay', relay.url, '--session', session, '--id', String(id), '--matmul-dim', String(d),
        `--values=${inputs[id].join(',')}`, '--timeout-ms', '60000', `--webrtc=${webrtc[id]}`, '--webrtc-timeout-ms', '30000'],
      { stdin: `${JSON.stringify({ private_key: keys[id].privateKey, public_keys: publicKeys })}\n`, ms: 180_000 },
    ),
  );
  const browser = page.evaluate((args) => window.rf.mixedParty(args), { url: relay.url, session, inputs: inputs[0], d, rtc: true });
  const settled = await Promise.allSettled([browser, ...natives]);
  const failed = settled.filter((r) => r.status === 'rejected').map((r) => r.reason?.stack ?? String(r.reason));
  assert.equal(failed.length, 0, `${failed.join('\n')}\nrelay log:\n${relay.log.join('\n')}`);
  const [{ links: pageLinks, ...b }, { links: l1, ...n1 }, { links: l2, ...n2 }] = settled.map((r) => r.value);
  const expected = checkPlaintext(inputs, d);
  assert.deepEqual(b, expected, 'the browser party agrees with plaintext');
  assert.deepEqual(n1, expected, 'native P1 agrees with plaintext');
  assert.deepEqual(n2, expected, 'native P2 agrees with plaintext');
  // Both ends of every pair report the same link.
  const via = (links, peer) => links.find((l) => l.peer === peer)?.via;
  assert.equal(via(l1, 0), pageLinks.via[0], `P0–P1: ${JSON.stringify([pageLinks, l1])}`);
  assert.equal(via(l2, 0), pageLinks.via[1], `P0–P2: ${JSON.stringify([pageLinks, l2])}`);
  assert.equal(via(l1, 2), via(l2, 1), `P1–P2: ${JSON.stringify([l1, l2])}`);
  return { pageLinks, natives: [l1, l2] };
}

pageTest('a browser party and two native parties multiply edge values with the browser↔native pairs on WebRTC', async (page) => {
  const { pageLinks, natives } = await checkProgram(page, [null, NATIVE_UDP, NATIVE_UDP]);
  assert.deepEqual(pageLinks.via, ['webrtc', 'webrtc'], `the page fell back: ${pageLinks.fallbackReason}`);
  assert.equal(pageLinks.fallbackReason, null);
  // Every frame of the page went over the DataChannels.
  const s = pageLinks.stats;
  assert.ok(s.webrtc.framesSent > 0 && s.webrtc.framesReceived > 0, JSON.stringify(s));
  assert.deepEqual(s.relay, { framesSent: 0, bytesSent: 0, framesReceived: 0, bytesReceived: 0 });
  natives.forEach((l, i) => assert.equal(l.find((x) => x.peer === 0).via, 'webrtc', `P${i + 1}: ${JSON.stringify(l)}`));
}, { timeout: 200_000 });

pageTest('a native party without WebRTC, or whose WebRTC fails, keeps its pair with the browser on the relay', async (page) => {
  // P1 takes part in the signalling with WebRTC off; P2's only UDP address cannot be bound
  // (192.0.2.1, TEST-NET-1, is no address here), so its WebRTC fails before sending anything.
  const { pageLinks, natives } = await checkProgram(page, [null, 'off', '192.0.2.1']);
  assert.deepEqual(pageLinks.via, ['relay', 'relay']);
  assert.match(pageLinks.fallbackReason, /party 1: WebRTC is turned off/);
  assert.match(pageLinks.fallbackReason, /party 2: .*binding UDP on 192\.0\.2\.1/);
  const s = pageLinks.stats;
  assert.ok(s.relay.framesSent > 0 && s.webrtc.framesSent === 0, JSON.stringify(s));
  assert.deepEqual(natives.map((l) => l.map((x) => x.via)), [['relay', 'relay'], ['relay', 'relay']]);
}, { timeout: 200_000 });

pageTest("a browser party (P2) and two native parties serve LeNet over WebRTC, with onnxruntime's class", async (page) => {
  await page.evaluate(() => window.rf.init());
  const keypairs = [0, 1, 2].map(() => generateNoiseKeypair());
  const client = generateNoiseKeypair();
  const sessionId = crypto.getRandomValues(new Uint8Array(16));
  // The natives are P0 and P1: here they offer, the page answers.
  const natives = serveModel({
    relayUrl: relay.url, model: modelPath('lenet'), sessionId, keypairs, clientPublicKey: client.publicKey, ids: [0, 1],
    timeoutMs: 60_000, args: [`--webrtc=${NATIVE_UDP}`, '--webrtc-timeout-ms', '30000'],
  });
  try {
    const served = page.evaluate((a) => window.rf.relayServe(a), {
      url: relay.url, session: hex(sessionId), id: 2, privateKey: hex(keypairs[2].privateKey),
      publicKeys: [...keypairs.map((k) => hex(k.publicKey)), hex(client.publicKey)], model: 'lenet', rtc: true,
    });
    served.catch(() => {}); // awaited below
    const c = await Client.connect({ relay: relay.url, session: sessionId, parties: keypairs.map((k) => k.publicKey), keypair: client, timeoutMs: 120_000 });
    const k = 3;
    const { input, expected, runtime } = referenceSample('lenet', k);
    const r = await c.classify('lenet', input, { backend: 'meteor' });
    c.close();
    assert.deepEqual(r.classes, [expected], `LeNet digit ${k}: ${runtime} says ${expected}`);
    const p2 = await served;
    assert.deepEqual(p2.links.via, ['webrtc', 'webrtc'], `the page fell back: ${p2.links.fallbackReason}`);
    // The page's frames to its compute peers went direct; only the client's links used the relay.
    assert.ok(p2.links.stats.webrtc.bytesSent > 100_000, JSON.stringify(p2.links.stats));
    const outcomes = await natives.done;
    for (const o of outcomes) {
      assert.ok(o.ok, `P${o.id}: ${o.message}\n${o.stderr}`);
      assert.equal(o.links.find((l) => l.peer === 2)?.via, 'webrtc', `P${o.id}: ${JSON.stringify(o.links)}`);
    }
    assert.equal(outcomes[0].links.find((l) => l.peer === 1).via, outcomes[1].links.find((l) => l.peer === 0).via, 'P0–P1 agree');
  } finally {
    await natives.stop();
  }
}, { timeout: 300_000 });
