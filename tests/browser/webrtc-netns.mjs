// The WebRTC tests proper, which webrtc.test.mjs runs inside a private network namespace
// (netns.mjs: only loopback, and a veth pair that exists nowhere else): three browser pages, each in its own
// browser context, are the three compute parties of one session over RtcTransport. The relay
// (native, on 127.0.0.1) carries the Noise handshakes and the WebRTC signalling inside them;
// then every frame between the parties goes over direct DataChannels.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { Client, generateNoiseKeypair, init } from 'ringfence';
import { referenceSample, startRelay } from '../../web/examples/local-deployment.mjs';
import { pagesTest, setupBrowser } from './harness.mjs';
import { assertInNetns } from './netns.mjs';
import { productInputs } from './page/inputs.js';

// ICE gathers every interface it sees: never run where a real one is.
assertInNetns(import.meta.url);

setupBrowser();

const hex = (bytes) => Buffer.from(bytes).toString('hex');
const unhex = (s) => Uint8Array.from(Buffer.from(s, 'hex'));

let relay;
let metricsUrl;
const relayLog = [];
before(async () => {
  await init();
  relay = await startRelay(['--metrics', '127.0.0.1:0'], relayLog);
  for (let i = 0; i < 100 && !metricsUrl; i++) {
    metricsUrl = relayLog.map((l) => /metrics on (http:\/\/\S+\/metrics)/.exec(l)?.[1]).find(Boolean);
    if (!metricsUrl) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(metricsUrl, `the relay did not say where its metrics are:\n${relayLog.join('\n')}`);
});
after(() => relay?.stop());

/** The relay's counters: messages and bytes forwarded, sessions open. */
async function relayMetrics() {
  const text = await (await fetch(metricsUrl)).text();
  const get = (name) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
  return { messages: get('ringfence_relay_messages_total'), bytes: get('ringfence_relay_bytes_total'), sessions: get('ringfence_relay_sessions') };
}

/** Runs `rf[fn](args(i))` in every page at once; resolves with the results in page order. */
const inPages = (pages, fn, args = () => undefined) =>
  Promise.all(pages.map((page, i) => page.evaluate(([f, a]) => window.rf[f](a), [fn, args(i)])));

/** Keys and a fresh session for the three pages (and the client's public key when given). */
async function joinPages(pages, clientKey) {
  await inPages(pages, 'init');
  const partyKeys = await inPages(pages, 'rtcKey');
  const publicKeys = clientKey ? [...partyKeys, hex(clientKey)] : partyKeys;
  const session = hex(crypto.getRandomValues(new Uint8Array(16)));
  const joined = inPages(pages, 'rtcJoin', (id) => ({ url: relay.url, session, id, publicKeys, parties: publicKeys.length }));
  return { partyKeys, session, joined };
}

function assertDirect(joined) {
  joined.forEach((j, id) => {
    assert.equal(j.kind, 'webrtc', `P${id} fell back to the relay: ${j.fallbackReason}`);
    assert.deepEqual(j.via, ['webrtc', 'webrtc'], `P${id}`);
  });
}

pagesTest('three pages multiply over direct DataChannels; the relay session is over before they compute', 3, async (pages) => {
  const { joined } = await joinPages(pages);
  assertDirect(await joined);
  // No link needs the relay any more: each party left it, and the relay closed the session.
  let m = await relayMetrics();
  for (let i = 0; i < 100 && m.sessions !== 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    m = await relayMetrics();
  }
  assert.equal(m.sessions, 0, 'the parties left the relay session');
  // 50 000 products: frames of ~400 KB, cut to the channels' message size.
  const n = 50_000;
  const outs = await inPages(pages, 'rtcProduct', () => ({ n }));
  const { xs, ys } = productInputs(n);
  const expected = xs.map((x, i) => BigInt.asIntN(64, x * ys[i])).join(',');
  outs.forEach((out, id) => assert.ok(out === expected, `P${id} reveals x·y`));
  assert.deepEqual(await relayMetrics(), m, 'the relay forwarded nothing while the parties computed');
  const stats = await inPages(pages, 'rtcClose');
  stats.forEach((s, id) => {
    assert.ok(s.webrtc.bytesSent > 2 * n * 8 && s.webrtc.framesReceived > 0, `P${id}: ${JSON.stringify(s)}`);
    // Frames of ~400 KB go out as several messages (Chromium's channels take 256 KiB at most).
    assert.ok(s.webrtc.messagesSent > s.webrtc.framesSent, `P${id}: ${JSON.stringify(s)}`);
    assert.deepEqual(s.relay, { framesSent: 0, bytesSent: 0, framesReceived: 0, bytesReceived: 0 }, `P${id}`);
  });
}, { timeout: 120_000 });

pagesTest("three pages serve LeNet over DataChannels to a client on the relay, with onnxruntime's class", 3, async (pages) => {
  const client = generateNoiseKeypair();
  const { partyKeys, session, joined } = await joinPages(pages, client.publicKey);
  // The client (here, in Node) is the session's fourth participant; its links stay on the relay.
  const connecting = Client.connect({ relay: relay.url, session: unhex(session), parties: partyKeys.map(unhex), keypair: client, timeoutMs: 60_000 });
  const [joinedPages, c] = await Promise.all([joined, connecting]);
  assertDirect(joinedPages);
  const start = await relayMetrics();
  const k = 0;
  const { input, expected, runtime } = referenceSample('lenet', k);
  const serving = inPages(pages, 'rtcServe', () => ({ model: 'lenet' }));
  const [r, served] = await Promise.all([c.classify('lenet', input, { backend: 'meteor' }), serving]);
  c.close();
  assert.deepEqual(r.classes, [expected], `LeNet digit ${k}: ${runtime} says ${expected}`);
  served.forEach((s, id) => assert.deepEqual(s, { outcome: 'answered', request: { model: 'lenet', backend: 'meteor', output: 'scores', batch: 1 } }, `P${id}`));
  const relayed = (await relayMetrics()).bytes - start.bytes;
  const stats = await inPages(pages, 'rtcClose');
  const direct = stats.reduce((sum, s) => sum + s.webrtc.bytesSent, 0);
  stats.forEach((s, id) => assert.ok(s.webrtc.framesSent > 0 && s.relay.framesSent > 0, `P${id}: ${JSON.stringify(s)}`));
  // The relay carried the client's traffic only: the parties' (weights, masks, products) went direct.
  const toClient = stats.reduce((sum, s) => sum + s.relay.bytesSent + s.relay.bytesReceived, 0);
  assert.ok(direct > 4 * relayed, `${direct} B over DataChannels, ${relayed} B through the relay`);
  assert.ok(relayed < 2 * toClient + 100_000, `the relay forwarded ${relayed} B; the client links carried ${toClient} B`);
}, { timeout: 180_000 });
