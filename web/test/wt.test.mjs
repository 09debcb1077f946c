// The SDK's WebTransport path in Node, which has no WebTransport: a fake WebTransport API (below)
// backed by an in-memory relay speaking the relay's WebTransport stream format, cutting every
// message at odd chunk boundaries. Three parties link over it (Noise handshakes, large frames);
// a refusal is final; a WebTransport that cannot connect falls back to the (native) WebSocket
// relay and says why; without any WebTransport, Node uses the WebSocket and says why.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SecureRelayTransport, generateNoiseKeypair, init, randomSessionId } from 'ringfence';
import { rejectsWith, startRelay } from './ws-relay.mjs';

let relay;
before(async () => {
  await init();
  relay = await startRelay();
});
after(() => relay?.stop());

const HASH = 'ab'.repeat(32);
const frame = (n, seed) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

/** A message `len: u32 LE ‖ body`. */
function message(body) {
  const m = new Uint8Array(4 + body.length);
  new DataView(m.buffer).setUint32(0, body.length, true);
  m.set(body, 4);
  return m;
}

const control = (code, text = '') => message(Uint8Array.from([0xff, code & 0xff, code >> 8, ...Buffer.from(text)]));

/**
 * An in-memory relay with the WebTransport front end's stream format, and `WebTransport`, a fake
 * of the browser API connecting to it. `refuse`: answer every session with that HTTP status;
 * `fail`: never connect (`ready` rejects).
 */
class FakeRelay {
  sessions = new Map();
  seen = [];
  finished = 0;

  constructor({ refuse, fail } = {}) {
    const relay = this;
    this.WebTransport = class {
      constructor(url, options) {
        relay.seen.push({ url, options });
        const { pathname, searchParams } = new URL(url);
        const [, , session, id] = pathname.split('/');
        let toParty;
        const readable = new ReadableStream({ start: (c) => (toParty = c) });
        const deliver = (bytes) => {
          // Odd chunk boundaries: the SDK must reassemble messages.
          for (let i = 0; i < bytes.length; ) {
            const n = 1 + Math.floor(Math.random() * 700);
            toParty.enqueue(bytes.slice(i, i + n));
            i += n;
          }
        };
        let pending = new Uint8Array(0);
        const writable = new WritableStream({
          write: (chunk) => {
            pending = Uint8Array.from([...pending, ...chunk]);
            for (;;) {
              if (pending.length < 4) return;
              const len = new DataView(pending.buffer).getUint32(0, true);
              if (pending.length < 4 + len) return;
              const body = pending.slice(4, 4 + len);
              pending = pending.slice(4 + len);
              relay.#forward(session, Number(id), body);
            }
          },
          close: () => {
            relay.finished += 1;
            deliver(control(1000, 'closed by the party'));
            toParty.close();
          },
        });
        let closed;
        this.closed = new Promise((ok) => (closed = ok));
        this.close = () => closed({ closeCode: 0, reason: '' });
        this.incomingBidirectionalStreams = new ReadableStream({ start: (c) => c.enqueue({ readable, writable }) });
        if (fail) {
          this.ready = Promise.reject(new Error('WebTransportError: Opening handshake failed.'));
          this.closed = Promise.reject(new Error('WebTransportError: Opening handshake failed.'));
          return;
        }
        this.ready = Promise.resolve();
        if (refuse) {
          deliver(control(refuse, 'the token is for another session'));
          toParty.close();
          return;
        }
        deliver(control(200));
        const s = relay.#session(session, Number(searchParams.get('parties')));
        s.deliver[id] = deliver;
        for (const m of s.queued[id].splice(0)) deliver(m);
      }
    };
  }

  #session(id, parties) {
    if (!this.sessions.has(id)) {
      this.sessions.set(id, { deliver: [], queued: Array.from({ length: parties }, () => []) });
    }
    return this.sessions.get(id);
  }

  #forward(session, from, body) {
    const s = this.sessions.get(session);
    const out = message(Uint8Array.from([from, ...body.subarray(1)]));
    const deliver = s.deliver[body[0]];
    if (deliver) deliver(out);
    else s.queued[body[0]].push(out);
  }
}

const keypairs = () => [0, 1, 2].map(() => generateNoiseKeypair());
const connect = (sessionId, id, kps, extra) =>
  SecureRelayTransport.connect({
    url: relay.url, sessionId, id, keypair: kps[id], publicKeys: kps.map((k) => k.publicKey), timeoutMs: 10_000, ...extra,
  });

/** Every party sends a large frame to every other; checks what arrives; closes. */
async function exchange(ts) {
  ts.forEach((t, i) => [0, 1, 2].filter((j) => j !== i).forEach((j) => t.send(j, frame(200_000, 10 * i + j))));
  await Promise.all(
    ts.map(async (t, i) => {
      for (const j of [0, 1, 2].filter((j) => j !== i)) assert.deepEqual(await t.recv(j), frame(200_000, 10 * j + i));
    }),
  );
  ts.forEach((t) => t.close());
}

test('three parties link over WebTransport and say so', async () => {
  const fake = new FakeRelay();
  const kps = keypairs();
  const sessionId = randomSessionId();
  const webTransport = { url: 'https://relay.test:9001', certificateHash: HASH };
  const ts = await Promise.all([0, 1, 2].map((id) => connect(sessionId, id, kps, { webTransport, WebTransport: fake.WebTransport })));
  for (const t of ts) {
    assert.equal(t.transport, 'webtransport');
    assert.equal(t.webTransportError, undefined);
  }
  for (const [i, j] of [[0, 1], [0, 2], [1, 2]]) assert.deepEqual(ts[i].seedWith(j), ts[j].seedWith(i), `seed ${i}-${j}`);
  // The relay path and the pinned certificate reach the WebTransport API.
  const { url, options } = fake.seen[0];
  assert.match(url, /^https:\/\/relay\.test:9001\/v1\/[0-9a-f]{32}\/\d\?parties=3&mode=noise-aesgcm$/);
  assert.deepEqual(options.serverCertificateHashes, [{ algorithm: 'sha-256', value: Uint8Array.from(Buffer.from(HASH, 'hex')) }]);
  await exchange(ts);
  // Leaving finishes the stream (after the frames already sent).
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(fake.finished, 3);
});

test('a refusal over WebTransport is final: no WebSocket attempt, the relay’s reason in the error', async () => {
  const fake = new FakeRelay({ refuse: 403 });
  class NoWebSocket {
    constructor() {
      throw new Error('the WebSocket must not be tried after a refusal');
    }
  }
  const kps = keypairs();
  const e = await rejectsWith(
    connect(randomSessionId(), 0, kps, { webTransport: { url: 'https://relay.test' }, WebTransport: fake.WebTransport, WebSocket: NoWebSocket }),
    'TRANSPORT',
  );
  assert.match(e.message, /the join token is not for this connection: .* \(relay: 403 the token is for another session\)$/);
});

test('a WebTransport that cannot connect falls back to the WebSocket, and says why', async () => {
  const fake = new FakeRelay({ fail: true });
  const kps = keypairs();
  const sessionId = randomSessionId();
  const webTransport = { url: 'https://127.0.0.1:9', certificateHash: HASH };
  const ts = await Promise.all([0, 1, 2].map((id) => connect(sessionId, id, kps, { webTransport, WebTransport: fake.WebTransport })));
  for (const t of ts) {
    assert.equal(t.transport, 'websocket');
    assert.match(t.webTransportError, /WebTransport at https:\/\/127\.0\.0\.1:9: .*Opening handshake failed/);
  }
  await exchange(ts);
});

test('Node has no WebTransport: the WebSocket is used, and the reason given', async () => {
  assert.equal(globalThis.WebTransport, undefined);
  const kps = keypairs();
  const sessionId = randomSessionId();
  const webTransport = { url: 'https://127.0.0.1:9' };
  const ts = await Promise.all([0, 1, 2].map((id) => connect(sessionId, id, kps, { webTransport })));
  for (const t of ts) {
    assert.equal(t.transport, 'websocket');
    assert.equal(t.webTransportError, 'this runtime has no WebTransport');
  }
  await exchange(ts);
});

test('bad WebTransport options are INVALID_ARGUMENT, before anything is sent', async () => {
  const kps = keypairs();
  for (const [webTransport, says] of [
    [{ url: 'http://127.0.0.1:1' }, /https:\/\//],
    ['https://127.0.0.1:1', /webTransport must be/],
    [{ url: 'https://127.0.0.1:1', certificateHash: 'abc' }, /64 hex digits/],
    [{ url: 'https://127.0.0.1:1', certificateHash: new Uint8Array(31) }, /64 hex digits or 32 bytes/],
    [{ url: 'https://127.0.0.1:1', connectTimeoutMs: 0 }, /connectTimeoutMs/],
  ]) {
    const e = await rejectsWith(connect(randomSessionId(), 0, kps, { webTransport }), 'INVALID_ARGUMENT');
    assert.match(e.message, says);
  }
});
