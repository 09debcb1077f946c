// A browser page as the input provider of a private classification over WebTransport: the
// relay of `ringfence local-deployment` (its WebTransport front end, self-signed certificate
// pinned by hash) and its three native `ringfence party` servers classify a held-out MNIST digit
// (LeNet, METEOR) and the page gets onnxruntime's class, with the client saying it used
// WebTransport. When WebTransport cannot connect (a wrong certificate hash, nothing listening)
// the client falls back to the WebSocket and says so and why; a refusal by the relay over
// WebTransport is final and carries the relay's reason; over the WebSocket the page reads the
// relay's refusal as well (in-band admission), turned into what to do.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { after, before } from 'node:test';
import { referenceSample, startLocalDeployment } from '../../web/examples/local-deployment.mjs';
import { pageTest, setupBrowser } from './harness.mjs';

setupBrowser();

let d;
before(async () => (d = await startLocalDeployment()));
after(() => d?.stop());

const hex = (b) => Buffer.from(b).toString('hex');
const MODEL = 'lenet';

/** Client options for a fresh session, for the page (bytes as hex), `webTransport` overridden. */
function options(webTransport = d.webTransport) {
  const o = d.clientOptions();
  const keypair = { privateKey: hex(o.keypair.privateKey), publicKey: hex(o.keypair.publicKey) };
  return { ...o, session: hex(o.session), parties: o.parties.map(hex), keypair, webTransport };
}

/** A genuine token for the client key of options `o` (hex), but for another session. */
const elsewhere = (o) => d.token(globalThis.crypto.getRandomValues(new Uint8Array(16)), 3, Buffer.from(o.keypair.publicKey, 'hex'));

/** Classifies held-out sample `k` in the page with options `o`. */
async function classify(page, o, k) {
  const { input, expected, runtime } = referenceSample(MODEL, k);
  await page.evaluate(() => window.rf.init());
  const r = await page.evaluate((a) => window.rf.classifyVia(a), { o, model: MODEL, input: Array.from(input) });
  assert.equal(r.class, expected, `${runtime} says ${expected}`);
  return r;
}

/** Chromium's console error for a WebTransport session that failed with QUIC error `code…`. */
const failedToConnect = (code) =>
  new RegExp(`^Failed to establish a connection to https://127\\.0\\.0\\.1:\\d+/v1/[^ ]*: net::ERR_QUIC_PROTOCOL_ERROR\\.${code}`);

/** A loopback UDP port nobody listens on (bound, then released). */
async function silentUdpPort() {
  const s = createSocket('udp4');
  await new Promise((ok) => s.bind(0, '127.0.0.1', ok));
  const { port } = s.address();
  await new Promise((ok) => s.close(ok));
  return port;
}

pageTest(
  'webtransport: a page classifies an MNIST digit with three native server parties over WebTransport',
  async (page) => {
    assert.match(d.webTransport.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.match(d.webTransport.certificateHash, /^[0-9a-f]{64}$/);
    const r = await classify(page, options(), 0);
    assert.equal(r.transport, 'webtransport', `fell back: ${r.webTransportError}`);
    assert.equal(r.webTransportError, undefined);
    assert.deepEqual(r.events, [['connecting', undefined], ...['request', 'setup', 'online', 'done'].map((s) => [s, 'webtransport'])]);
    // A second client of the same page and relay (the first one's connection is gone).
    const again = await classify(page, options(), 1);
    assert.equal(again.transport, 'webtransport');
  },
  { timeout: 120_000 },
);

pageTest(
  'webtransport: a wrong certificate hash falls back to the WebSocket, and the client says why',
  async (page) => {
    const wrong = { ...d.webTransport, certificateHash: '00'.repeat(32) };
    const r = await classify(page, options(wrong), 2);
    assert.equal(r.transport, 'websocket');
    assert.match(r.webTransportError, /WebTransport at https:\/\/127\.0\.0\.1/, r.webTransportError);
    assert.deepEqual(r.events.slice(1).map((e) => e[1]), ['websocket', 'websocket', 'websocket', 'websocket']);
  },
  // Chromium reports the failed handshake on the console itself (one line).
  { timeout: 120_000, expectedErrors: [failedToConnect('QUIC_TLS_CERTIFICATE_UNKNOWN')] },
);

pageTest(
  'webtransport: with no WebTransport server the client falls back to the WebSocket',
  async (page) => {
    const nobody = { url: `https://127.0.0.1:${await silentUdpPort()}`, certificateHash: d.webTransport.certificateHash };
    const r = await classify(page, options(nobody), 3);
    assert.equal(r.transport, 'websocket');
    assert.match(r.webTransportError, /WebTransport at https:\/\/127\.0\.0\.1/, r.webTransportError);
  },
  { timeout: 120_000, expectedErrors: [failedToConnect('QUIC_')] },
);

pageTest(
  'webtransport: a refusal by the relay over WebTransport is final and carries its reason',
  async (page) => {
    await page.evaluate(() => window.rf.init());
    const o = options();
    const stolen = { ...o, token: elsewhere(o) }; // a token for another session
    const err = await page.evaluate((a) => window.rf.connectFails(a), { o: stolen });
    assert.ok(err, 'connect must fail');
    assert.equal(err.code, 'TRANSPORT', err.message);
    assert.match(err.message, /the join token is not for this connection: .*\(relay: 403 the token is for another session\)/, err.message);
  },
  { timeout: 60_000 },
);

pageTest(
  'websocket: a browser reads the relay\'s refusal too (in-band admission), and is told what to do',
  async (page) => {
    await page.evaluate(() => window.rf.init());
    const { webTransport, token, ...noToken } = options();
    const missing = await page.evaluate((a) => window.rf.connectFails(a), { o: noToken });
    assert.equal(missing?.code, 'TRANSPORT', missing?.message);
    assert.match(missing.message, /the relay requires a join token for this session: pass `token` .*\(relay: 401 this relay requires a token\)$/, missing.message);
    const stolen = await page.evaluate((a) => window.rf.connectFails(a), { o: { ...noToken, token: elsewhere(noToken) } });
    assert.match(stolen?.message, /the join token is not for this connection: .*\(relay: 403 the token is for another session\)$/, stolen?.message);
  },
  { timeout: 60_000 },
);
