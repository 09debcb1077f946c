// RtcTransport in Node, through the native relay: the signalling inside the Noise links, the
// framing over DataChannels (an in-process fake, web/test/fake-rtc.mjs, strict about message
// size and send-queue size) and every fallback to the relay. Real WebRTC between browser pages
// is tests/browser/webrtc.test.mjs (inside a private network namespace).
import assert from 'node:assert/strict';
import { randomFillSync } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Party, RtcTransport, SecureRelayTransport, generateNoiseKeypair, init, randomSessionId } from 'ringfence';
import { fakeWebRtc } from './fake-rtc.mjs';
import { rejectsWith, startRelay } from './ws-relay.mjs';

let relay;
before(async () => {
  await init();
  relay = await startRelay();
});
after(() => relay?.stop());

/** Connects parties 0, 1, 2 of a fresh session; `extra(id)` adds options per party. */
async function connectThree(extra = () => ({})) {
  const keypairs = [0, 1, 2].map(() => generateNoiseKeypair());
  const sessionId = randomSessionId();
  const warnings = [];
  const ts = await Promise.all(
    [0, 1, 2].map((id) =>
      RtcTransport.connect({
        url: relay.url, sessionId, id, keypair: keypairs[id], publicKeys: keypairs.map((k) => k.publicKey), timeoutMs: 20_000,
        onWarning: (m) => warnings.push(m), ...extra(id),
      }),
    ),
  );
  return { ts, sessionId, warnings };
}

/** Every party multiplies P0's x by P1's y (n values) over `ts`; returns the revealed products. */
async function product(ts, sessionId, n) {
  const x = Array.from({ length: n }, (_, i) => BigInt(i) - 7n);
  const y = Array.from({ length: n }, (_, i) => (BigInt(i) << 33n) + 3n);
  const outs = await Promise.all(
    ts.map(async (transport, id) => {
      const p = await Party.join({ id, sessionId, seeds: transport.seeds, transport });
      const xs = await p.input(0, id === 0 ? BigInt64Array.from(x) : null, n);
      const ys = await p.input(1, id === 1 ? BigInt64Array.from(y) : null, n);
      const out = await p.reveal(await p.mul(xs, ys));
      p.finish();
      return out;
    }),
  );
  const expected = BigInt64Array.from(x, (v, i) => BigInt.asIntN(64, v * y[i]));
  for (const out of outs) assert.deepEqual(out, expected);
}

test('three parties over (fake) DataChannels: seeds from Noise, frames chunked under back-pressure, none through the relay', async () => {
  const rtc = fakeWebRtc({ maxMessageSize: 16 << 10 });
  const { ts, sessionId, warnings } = await connectThree(() => ({ RTCPeerConnection: rtc.RTCPeerConnection }));
  assert.deepEqual(warnings, []);
  for (const t of ts) {
    assert.equal(t.kind, 'webrtc');
    assert.equal(t.fallbackReason, undefined);
  }
  assert.deepEqual([ts[0].via(1), ts[0].via(2), ts[1].via(2)], ['webrtc', 'webrtc', 'webrtc']);
  for (const [i, j] of [[0, 1], [0, 2], [1, 2]]) assert.deepEqual(ts[i].seedWith(j), ts[j].seedWith(i), `seed ${i}-${j}`);
  assert.notDeepEqual(ts[0].seedWith(1), ts[0].seedWith(2));
  // 50 000 products: frames of ~400 KB, 25 messages each.
  await product(ts, sessionId, 50_000);
  for (const t of ts) {
    const s = t.stats();
    assert.ok(s.webrtc.framesSent > 0 && s.webrtc.bytesSent > 800_000, JSON.stringify(s));
    assert.ok(s.webrtc.messagesSent > s.webrtc.bytesSent / (16 << 10), `cut to 16 KiB messages: ${JSON.stringify(s)}`);
    assert.deepEqual(s.relay, { framesSent: 0, bytesSent: 0, framesReceived: 0, bytesReceived: 0 });
  }
  assert.ok(rtc.stats.messages > 100, JSON.stringify(rtc.stats));
  ts.forEach((t) => t.close());
});

test('frames of every size arrive whole and in order; a closing party delivers what it sent, then the peer sees CLOSED', async () => {
  const chunk = 16 << 10;
  const rtc = fakeWebRtc({ maxMessageSize: chunk });
  const { ts } = await connectThree(() => ({ RTCPeerConnection: rtc.RTCPeerConnection, timeoutMs: 5_000 }));
  const sizes = [0, 1, chunk - 5, chunk - 4, chunk - 3, chunk, 3 * chunk + 7, 3 << 20];
  const frame = (n, tag) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + tag) & 255);
  // 24 MB queued at once, above the 16 MiB send queue (Chromium's): only back-pressure gets it
  // through.
  const big = randomFillSync(new Uint8Array(5 << 20));
  for (const n of sizes) ts[0].send(1, frame(n, n));
  for (let k = 0; k < 4; k++) ts[0].send(1, big);
  ts[0].close();
  for (const n of sizes) assert.deepEqual(await ts[1].recv(0), frame(n, n), `frame of ${n} bytes`);
  for (let k = 0; k < 4; k++) assert.ok(Buffer.from(await ts[1].recv(0)).equals(big), `big frame ${k}`);
  assert.ok(rtc.stats.maxBuffered < 16 << 20, JSON.stringify(rtc.stats));
  const closed = await ts[1].recv(0).then(() => null, (e) => e);
  assert.equal(closed?.code, 'CLOSED', String(closed));
  assert.throws(() => ts[0].send(1, frame(1, 0)), { code: 'CLOSED' });
  assert.throws(() => ts[0].send(0, frame(1, 0)), RangeError);
  ts.forEach((t) => t.close());
});

test('without WebRTC in the runtime every link stays on the relay, and the transport says so', async () => {
  const { ts, sessionId, warnings } = await connectThree();
  for (const t of ts) {
    assert.equal(t.kind, 'relay');
    assert.match(t.fallbackReason, /no RTCPeerConnection/);
  }
  assert.equal(warnings.length, 3);
  assert.match(warnings[0], /^RtcTransport: party \d's links go through the relay to party \d: this runtime has no RTCPeerConnection/);
  await product(ts, sessionId, 100);
  for (const t of ts) {
    const s = t.stats();
    assert.ok(s.relay.framesSent > 0 && s.relay.framesReceived > 0, JSON.stringify(s));
    assert.equal(s.webrtc.framesSent, 0);
  }
  ts.forEach((t) => t.close());
});

test('channels that never open fall back to the relay after rtcTimeoutMs; both ends agree', async () => {
  const rtc = fakeWebRtc({ connect: false });
  const t0 = performance.now();
  const { ts, sessionId } = await connectThree(() => ({ RTCPeerConnection: rtc.RTCPeerConnection, rtcTimeoutMs: 300 }));
  const ms = performance.now() - t0;
  assert.ok(ms >= 300 && ms < 15_000, `${ms} ms (the fallback must not wait for timeoutMs)`);
  for (const t of ts) {
    assert.equal(t.kind, 'relay');
    assert.match(t.fallbackReason, /the DataChannel did not open within 300 ms/);
  }
  await product(ts, sessionId, 100);
  ts.forEach((t) => t.close());
});

test('a party without WebRTC keeps the relay with both peers; the other pair still goes direct', async () => {
  const rtc = fakeWebRtc();
  const { ts, sessionId } = await connectThree((id) => ({ RTCPeerConnection: id === 2 ? null : rtc.RTCPeerConnection }));
  assert.deepEqual(ts.map((t) => t.kind), ['mixed', 'mixed', 'relay']);
  assert.deepEqual([ts[0].via(1), ts[0].via(2), ts[1].via(2)], ['webrtc', 'relay', 'relay']);
  assert.match(ts[0].fallbackReason, /^party 2: WebRTC is turned off \(RTCPeerConnection: null\)$/);
  assert.match(ts[2].fallbackReason, /party 0: WebRTC is turned off.*; party 1: WebRTC is turned off/);
  await product(ts, sessionId, 1_000);
  const s = ts.map((t) => t.stats());
  assert.ok(s[0].webrtc.framesSent > 0 && s[0].relay.framesSent > 0, JSON.stringify(s[0]));
  assert.equal(s[2].webrtc.framesSent, 0);
  ts.forEach((t) => t.close());
});

test('a peer that does not speak the signalling (SecureRelayTransport) is named, not waited for', async () => {
  const rtc = fakeWebRtc();
  const keypairs = [0, 1, 2].map(() => generateNoiseKeypair());
  const sessionId = randomSessionId();
  const common = { url: relay.url, sessionId, publicKeys: keypairs.map((k) => k.publicKey), timeoutMs: 3_000 };
  const p0 = RtcTransport.connect({ ...common, id: 0, keypair: keypairs[0], RTCPeerConnection: rtc.RTCPeerConnection });
  // P1 and P2 use the plain Noise transport: P1 stays silent, P2 starts computing at once, so its
  // first frame reaches P0 where the answer to P0's offer belongs.
  const [p1, p2] = await Promise.all([1, 2].map((id) => SecureRelayTransport.connect({ ...common, id, keypair: keypairs[id] })));
  const joined = Party.join({ id: 2, sessionId, seeds: p2.seeds, transport: p2 }).catch(() => {});
  const e = await rejectsWith(p0, 'PEER_MISBEHAVED');
  assert.equal(e.peer, 2);
  assert.match(e.message, /^party 2 sent something other than WebRTC signalling \(\d+ bytes\): every compute party must connect with RtcTransport$/);
  p1.close();
  p2.close();
  await joined;
});

test('options are checked before anything is sent', async () => {
  const kp = generateNoiseKeypair();
  const base = { url: relay.url, sessionId: randomSessionId(), id: 0, keypair: kp, publicKeys: [kp.publicKey, kp.publicKey, kp.publicKey] };
  const bad = [
    [{ ...base, id: 3, parties: 4, publicKeys: Array(4).fill(kp.publicKey) }, /id must be a compute party's \(0 to 2\), got 3/],
    [{ ...base, rtcTimeoutMs: 0 }, /rtcTimeoutMs must be a positive number/],
    [{ ...base, iceServers: 'stun:x' }, /iceServers must be an array/],
    [{ ...base, RTCPeerConnection: {} }, /RTCPeerConnection must be a constructor, or null/],
    [{ ...base, publicKeys: [] }, /publicKeys must list the 3 participants' keys/],
  ];
  for (const [o, message] of bad) {
    const e = await rejectsWith(RtcTransport.connect(o), 'INVALID_ARGUMENT');
    assert.match(e.message, /^RtcTransport: /);
    assert.match(e.message, message);
  }
});
