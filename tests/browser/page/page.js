// The test page's side: each `rf.*` function runs one scenario with the SDK and returns plain
// data for the Node test to check against its own plaintext. Progress goes to #log, which
// the screenshots show.
import {
  Client, InMemoryNetwork, MessagePortTransport, Party, RtcTransport, SecureRelayTransport, generateNoiseKeypair, init,
  insecureTestSeeds, randomSessionId,
} from 'ringfence';
import { productInputs } from '/inputs.js';
import { describeError, workerProgram } from '/program.js';

const logEl = document.getElementById('log');
const log = (line) => (logEl.textContent += `${line}\n`);
const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
const unhex = (s) => Uint8Array.from(s.match(/../g), (b) => parseInt(b, 16));

/** Joins three parties over `net` and runs `f(party, id)` at each; returns the three results. */
async function threeParties(net, label, f, extra = () => ({})) {
  const sessionId = randomSessionId();
  const parties = await Promise.all(
    [0, 1, 2].map(async (id) =>
      Party.join({ id, sessionId, seeds: await insecureTestSeeds(label, id), transport: net.transport(id), ...extra(id) }),
    ),
  );
  return Promise.all(parties.map((p, id) => f(p, id)));
}

/** Starts the module worker that runs P2; resolves with its first message. */
/**
 * `t` whose `recv` gives up after `limit.ms` (read at each call), rejecting as a transport's own
 * timeout does. A `recv` that gave up leaves the inner one pending: for the end of a test only.
 */
function patience(t, limit) {
  return {
    send: (to, frame) => t.send(to, frame),
    recv: (from) =>
      new Promise((resolve, reject) => {
        const ms = limit.ms;
        const timer = setTimeout(() => reject(Object.assign(new Error(`no frame within ${ms} ms`), { code: 'TIMEOUT', timeoutMs: ms })), ms);
        t.recv(from).then(
          (f) => (clearTimeout(timer), resolve(f)),
          (e) => (clearTimeout(timer), reject(e)),
        );
      }),
    close: () => t.close(),
  };
}

function startWorker(message, transfer) {
  const worker = new Worker('/worker.js', { type: 'module' });
  const reply = new Promise((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.onerror = (e) => reject(new Error(`worker failed: ${e.message}`));
  });
  worker.postMessage(message, transfer);
  return { worker, reply };
}

/**
 * `t` with its time counted (ms, in `times`): `waitMs` while at least one `recv` is pending (the
 * party waits for its peers: their work, the relay, and decrypting what arrives), `sendMs` in
 * `send` (encrypting and queueing a frame).
 */
function timedTransport(t) {
  const times = { waitMs: 0, sendMs: 0 };
  let pending = 0;
  let since = 0;
  return {
    times,
    send(to, frame) {
      const t0 = performance.now();
      t.send(to, frame);
      times.sendMs += performance.now() - t0;
    },
    async recv(from) {
      if (pending++ === 0) since = performance.now();
      try {
        return await t.recv(from);
      } finally {
        if (--pending === 0) times.waitMs += performance.now() - since;
      }
    },
    close: () => t.close(),
  };
}

window.rf = {
  async init(forceFallback) {
    const info = await init({ forceFallback });
    log(`init(): ${info.module} module (SIMD supported: ${info.simdSupported})`);
    return info;
  },

  /** Three in-memory parties: mul, lt, relu, matmul, fixed-point mul on the given operands. */
  async suite({ xs, ys, a, b, dims: [m, k, n], fx, fy, fracBits }) {
    const net = new InMemoryNetwork(3, { timeoutMs: 20_000 });
    const outs = await threeParties(net, 'browser-suite', async (p, id) => {
      const share = (owner, v) => p.input(owner, owner === id ? BigInt64Array.from(v) : null, v.length);
      const x = await share(0, xs);
      const y = await share(1, ys);
      const store = await p.dabits(xs.length);
      const prod = await p.mul(x, y);
      const less = await p.lt(x, y);
      const relu = await p.relu(x, store);
      const c = await p.matmul(await share(0, a), await share(1, b), m, k, n);
      const pairs = await p.truncPairs(fx.length, fracBits);
      const fz = await p.mulFixed(await share(2, fx), await share(0, fy), pairs);
      const out = {
        mul: [...(await p.reveal(prod))],
        lt: [...(await p.revealBits(less))],
        relu: [...(await p.reveal(relu))],
        matmul: [...(await p.reveal(c))],
        mulFixed: [...(await p.reveal(fz))],
      };
      p.finish();
      return out;
    });
    net.close();
    log(`suite: ${xs.length} mul/lt/relu, ${m}×${k}·${k}×${n} matmul, ${fx.length} fixed-point mul: done`);
    return outs;
  },

  /** Three Noise keypairs made here (hex); kept for `mixedParty`, returned for the natives. */
  noiseKeys() {
    this.keys = [0, 1, 2].map(() => generateNoiseKeypair());
    return this.keys.map((k) => ({ privateKey: hex(k.privateKey), publicKey: hex(k.publicKey) }));
  },

  /**
   * P0 of a session through the relay at `url` (the `ringfence party` check program); with
   * `rtc`, over RtcTransport (the native parties run `--webrtc`), and the result says where each
   * pair's frames went (`links`).
   */
  async mixedParty({ url, session, inputs, d, rtc }) {
    const sessionId = unhex(session);
    const options = { url, sessionId, id: 0, keypair: this.keys[0], publicKeys: this.keys.map((k) => k.publicKey), timeoutMs: 20_000 };
    const transport = rtc
      ? await RtcTransport.connect({ ...options, timeoutMs: 60_000, rtcTimeoutMs: 30_000, onWarning: log })
      : await SecureRelayTransport.connect(options);
    log(`relay ${url}: Noise links to the two native parties established${rtc ? `; WebRTC: P1 ${transport.via(1)}, P2 ${transport.via(2)}` : ''}`);
    const party = await Party.join({ id: 0, sessionId, seeds: transport.seeds, transport });
    const n = d * d;
    const x = [];
    for (const owner of [0, 1, 2]) x.push(await party.input(owner, owner === 0 ? BigInt64Array.from(inputs) : null, n));
    // The native parties' order exactly: all three operations, then the three reveals.
    const mul = await party.mul(x[0], x[1]);
    const lt = await party.lt(x[0], x[1]);
    const mm = await party.matmul(x[0], x[2], d, d, d);
    const strings = (v) => Array.from(v, (b) => b.toString());
    const out = {
      mul: strings(await party.reveal(mul)),
      lt: Array.from(await party.revealBits(lt)),
      matmul: strings(await party.reveal(mm)),
    };
    const links = rtc && { via: [transport.via(1), transport.via(2)], fallbackReason: transport.fallbackReason ?? null, stats: transport.stats() };
    transport.close();
    log(`mixed session with native parties: ${n} mul/lt, ${d}×${d} matmul: done`);
    return links ? { ...out, links } : out;
  },

  /** P0 through the relay while no other party ever joins; returns the error. */
  async lonelyParty({ url, session, timeoutMs }) {
    const t0 = performance.now();
    const err = await SecureRelayTransport.connect({
      url, sessionId: unhex(session), id: 0, keypair: this.keys[0], publicKeys: this.keys.map((k) => k.publicKey), timeoutMs,
    }).then((t) => (t.close(), null), describeError);
    log(`relay session without peers: ${err?.code} after ${Math.round(performance.now() - t0)} ms`);
    return { err, ms: performance.now() - t0 };
  },

  /**
   * This page's party of a WebRTC session (webrtc.test.mjs), step 1: a fresh Noise keypair, kept
   * here; returns its public key (hex) for the other participants.
   */
  rtcKey() {
    this.rtcKeypair = generateNoiseKeypair();
    return hex(this.rtcKeypair.publicKey);
  },

  /**
   * Step 2: party `id` of `parties` connects over RtcTransport (signalling through the relay at
   * `url`) and joins; returns how its links go.
   */
  async rtcJoin({ url, session, id, publicKeys, parties }) {
    const t0 = performance.now();
    const sessionId = unhex(session);
    this.rtc = await RtcTransport.connect({
      url, sessionId, id, parties, keypair: this.rtcKeypair, publicKeys: publicKeys.map(unhex), timeoutMs: 60_000,
      // Generous for a loaded CI machine: the test fails on a fallback.
      rtcTimeoutMs: 30_000,
    });
    const connectMs = performance.now() - t0;
    const peers = [0, 1, 2].filter((j) => j !== id);
    log(`P${id}: RtcTransport ${this.rtc.kind} in ${Math.round(connectMs)} ms (${peers.map((j) => `P${j} ${this.rtc.via(j)}`).join(', ')})`);
    this.rtcParty = await Party.join({ id, sessionId, seeds: this.rtc.seeds, transport: this.rtc, parties });
    return { kind: this.rtc.kind, via: peers.map((j) => this.rtc.via(j)), fallbackReason: this.rtc.fallbackReason ?? null, connectMs };
  },

  /** Step 3a: x (P0's) times y (P1's) of `productInputs(n)`, revealed (comma-separated). */
  async rtcProduct({ n }) {
    const p = this.rtcParty;
    const { xs, ys } = productInputs(n);
    const t0 = performance.now();
    const x = await p.input(0, p.id === 0 ? BigInt64Array.from(xs) : null, n);
    const y = await p.input(1, p.id === 1 ? BigInt64Array.from(ys) : null, n);
    const out = await p.reveal(await p.mul(x, y));
    log(`P${p.id}: ${n} products over ${this.rtc.kind} in ${Math.round(performance.now() - t0)} ms`);
    return out.join(',');
  },

  /**
   * Step 3b: serves model NAME to the session's client: P0 (which shares the weights) from
   * `models/NAME.onnx`, P1 and P2 from its weight-free shape file `models/NAME.rfshape`.
   */
  async rtcServe({ model }) {
    const file = await modelFile(model, this.rtcParty.id);
    const r = await this.rtcParty.serve({ models: { [model]: { model: file, output: 'scores' } } });
    log(`P${this.rtcParty.id}: served ${model}: ${r.outcome} (setup ${Math.round(r.stages.setup?.ms)} ms, online ${Math.round(r.stages.online?.ms)} ms)`);
    return r.outcome === 'answered' ? { outcome: r.outcome, request: r.request } : { outcome: r.outcome, reason: r.reason };
  },

  /** Step 4: finishes, closes the transport; returns its counters. */
  rtcClose() {
    this.rtcParty.finish();
    const stats = this.rtc.stats();
    this.rtc.close();
    const w = stats.webrtc;
    log(`P${this.rtcParty.id}: ${w.framesSent} frames (${w.bytesSent} B, ${w.messagesSent} messages) sent over WebRTC, ${stats.relay.framesSent} over the relay`);
    return stats;
  },

  /**
   * A private classification of `input` by a deployment's server parties (`o`: its client
   * options, keys, session and the optional client `keypair` in hex, `webTransport` as given to
   * `Client.connect`); returns the class, which of the relay's front ends the client used and
   * why not WebTransport, the transport each progress event reports (and the bytes sent by
   * then, `sentAt`), the connect and classification times, the stage timings and the client's
   * counters.
   */
  async classifyVia({ o, model, input, backend = 'meteor', output = 'scores' }) {
    const events = [];
    const t0 = performance.now();
    const keypair = o.keypair && { privateKey: unhex(o.keypair.privateKey), publicKey: unhex(o.keypair.publicKey) };
    const client = await Client.connect({
      ...o, session: unhex(o.session), parties: o.parties.map(unhex), keypair, onProgress: (e) => events.push(e),
    });
    const connectMs = performance.now() - t0;
    try {
      const r = await client.classify(model, Float32Array.from(input), { backend, output });
      const why = client.webTransportError ? ` (not WebTransport: ${client.webTransportError})` : '';
      log(`${model} via ${client.transport}${why}: class ${r.classes[0]}`);
      // Stages as they start; a computing client's preprocessing reports apart.
      const stages = events.filter((e) => e.stage !== 'preprocessing');
      return {
        class: r.classes[0],
        transport: client.transport,
        webTransportError: client.webTransportError,
        events: stages.map((e) => [e.stage, e.transport]),
        sentAt: stages.map((e) => e.bytesSent),
        preprocessing: events.filter((e) => e.stage === 'preprocessing').map((e) => e.preprocessing),
        connectMs,
        classifyMs: performance.now() - t0 - connectMs,
        timings: r.timings,
        stats: r.stats,
      };
    } finally {
      client.close();
    }
  },

  /**
   * Party `id` of a session through the relay at `url` (over WebTransport when `webTransport` is
   * given), with Noise keys in hex (`publicKeys`: the `servers` parties' — 3, or 5 or 7 serving
   * rss — and the client's), serves model NAME to the client for one classification (P0 from
   * `models/NAME.onnx`, the others from `models/NAME.rfshape`); returns which front end its links
   * used, the connect time, the stage figures of `Party.serve`, and per stage the time spent
   * waiting for the peers and sending (see `timedTransport`). With `rtc`, over RtcTransport (its
   * peers run `--webrtc`): the result also says where each pair's frames went (`links`).
   */
  async relayServe({ url, webTransport, session, id, privateKey, publicKeys, model, rtc, servers = 3 }) {
    const file = await modelFile(model, id);
    const sessionId = unhex(session);
    const keys = publicKeys.map(unhex);
    const t0 = performance.now();
    const parties = servers + 1;
    const options = { url, webTransport, sessionId, id, servers, parties, keypair: { privateKey: unhex(privateKey), publicKey: keys[id] }, publicKeys: keys, timeoutMs: 20_000 };
    const transport = rtc
      ? await RtcTransport.connect({ ...options, timeoutMs: 60_000, rtcTimeoutMs: 30_000, onWarning: log })
      : await SecureRelayTransport.connect(options);
    const peers = [0, 1, 2].filter((j) => j !== id);
    const connectMs = performance.now() - t0;
    const timed = timedTransport(transport);
    const marks = {};
    const onProgress = (e) => (marks[e.stage] ??= { ...timed.times });
    try {
      const scheme = servers === 3 ? undefined : 'rss';
      const party = await Party.join({ id, sessionId, seeds: transport.seeds, transport: timed, servers, parties, scheme, onProgress });
      const r = await party.serve({ models: { [model]: { model: file, output: 'scores' } } });
      party.finish();
      log(`P${id} via ${transport.transport}: served ${model}: ${r.outcome}`);
      if (r.outcome !== 'answered') throw new Error(`P${id} refused the request: ${r.reason}`);
      const between = (a, b) => ({ waitMs: marks[b].waitMs - marks[a].waitMs, sendMs: marks[b].sendMs - marks[a].sendMs });
      const times = { setup: between('setup', 'online'), online: between('online', 'done') };
      const links = rtc && { via: peers.map((j) => transport.via(j)), fallbackReason: transport.fallbackReason ?? null, stats: transport.stats() };
      // RtcTransport's relay links are always WebSocket ones.
      const front = rtc ? 'websocket' : transport.transport;
      return { transport: front, webTransportError: transport.webTransportError, connectMs, stages: r.stages, times, ...(links ? { links } : {}) };
    } finally {
      transport.close();
    }
  },

  /**
   * The cost of the Noise links in this page: three parties of a session through the relay at
   * `url` (keys made here), P0 sends `frames` frames of `bytes` to P1, then, once they have
   * arrived (a pause of `settleMs`), P1 receives them. Returns the ms spent in P0's `send`s
   * (encrypting, queueing) and in P1's `recv`s (decrypting: frames are decrypted when received).
   */
  async noiseCost({ url, webTransport, frames, bytes, settleMs }) {
    const keys = [0, 1, 2].map(() => generateNoiseKeypair());
    const sessionId = randomSessionId();
    const ts = await Promise.all(
      [0, 1, 2].map((id) =>
        SecureRelayTransport.connect({ url, webTransport, sessionId, id, keypair: keys[id], publicKeys: keys.map((k) => k.publicKey), timeoutMs: 20_000 }),
      ),
    );
    try {
      const frame = new Uint8Array(bytes).fill(7);
      let t0 = performance.now();
      for (let i = 0; i < frames; i++) ts[0].send(1, frame);
      const sendMs = performance.now() - t0;
      await new Promise((r) => setTimeout(r, settleMs));
      t0 = performance.now();
      for (let i = 0; i < frames; i++) await ts[1].recv(0);
      const recvMs = performance.now() - t0;
      log(`Noise over ${ts[0].transport}: ${frames} × ${bytes} B, send ${Math.round(sendMs)} ms, receive ${Math.round(recvMs)} ms`);
      return { transport: ts[0].transport, cipher: ts[0].cipherWith(1), sendMs, recvMs };
    } finally {
      ts.forEach((t) => t.close());
    }
  },

  /** `Client.connect` with options `o` (as for `classifyVia`), which must fail; returns the error. */
  async connectFails({ o }) {
    const err = await Client.connect({ ...o, session: unhex(o.session), parties: o.parties.map(unhex), timeoutMs: 5000 }).then(
      (c) => (c.close(), null),
      describeError,
    );
    log(`connect: ${err?.code}: ${err?.message}`);
    return err;
  },

  /** P0 and P1 here, P2 in a module worker, over message ports; `inputs[i]` is P_i's vector. */
  async withWorker({ inputs }) {
    const n = inputs[0].length;
    const label = 'browser-worker';
    const sessionId = randomSessionId();
    const ports = MessagePortTransport.channels(3);
    const { worker, reply } = startWorker({ ports: ports[2], sessionId, label, n, own: inputs[2] }, ports[2].filter(Boolean));
    const ts = [0, 1].map((id) => new MessagePortTransport(ports[id]));
    const here = await Promise.all(
      [0, 1].map(async (id) => {
        const party = await Party.join({ id, sessionId, seeds: await insecureTestSeeds(label, id), transport: ts[id] });
        return workerProgram(party, id, n, inputs[id]);
      }),
    );
    const w = await reply;
    ts.forEach((t) => t.close());
    worker.terminate();
    log(`worker party (${w.realm ?? 'failed'}, ${w.module ?? '-'} module): ${w.error ? w.error.message : 'done'}`);
    return { outs: [...here, w.out], realm: w.realm, error: w.error };
  },

  /** P2 joins in a worker that is then terminated; P1 then waits for it in a multiplication. */
  async workerVanishes({ timeoutMs }) {
    const label = 'browser-vanish';
    const sessionId = randomSessionId();
    const ports = MessagePortTransport.channels(3);
    const { worker, reply } = startWorker({ ports: ports[2], sessionId, label, joinOnly: true }, ports[2].filter(Boolean));
    // Joining waits for the worker to load its module (seconds on a busy machine): the short
    // patience under test applies from the multiplication on.
    const limit = { ms: 30_000 };
    const ts = [0, 1].map((id) => patience(new MessagePortTransport(ports[id]), limit));
    const parties = await Promise.all(
      [0, 1].map(async (id) => Party.join({ id, sessionId, seeds: await insecureTestSeeds(label, id), transport: ts[id] })),
    );
    const joined = await reply;
    limit.ms = timeoutMs;
    worker.terminate();
    const t0 = performance.now();
    const err = await parties[1].mul(parties[1].random(10), parties[1].random(10)).then(() => null, describeError);
    ts.forEach((t) => t.close());
    log(`worker terminated mid-session: P1 got ${err?.code} after ${Math.round(performance.now() - t0)} ms`);
    return { joined, err, ms: performance.now() - t0 };
  },

  /** P0 and P1 multiply, P2 never does; P1's signal aborts after `afterMs`. */
  async abortWaiting({ afterMs }) {
    const net = new InMemoryNetwork(3); // no timeout: only the abort can end P1's wait
    const ac = new AbortController();
    const reason = new DOMException('user left the page', 'AbortError');
    const [p0, p1] = await threeParties(net, 'browser-abort', async (p) => p, (id) => (id === 1 ? { signal: ac.signal } : {}));
    const pending = p1.mul(p1.random(100), p1.random(100));
    p0.mul(p0.random(100), p0.random(100)).catch(() => {}); // P0 needs P1's frame, which was sent
    setTimeout(() => ac.abort(reason), afterMs);
    const t0 = performance.now();
    const err = await pending.then(() => null, (e) => ({ ...describeError(e), causeIsReason: e?.cause === reason }));
    net.close();
    log(`abort while waiting on a silent peer: ${err?.code} after ${Math.round(performance.now() - t0)} ms`);
    return { err, ms: performance.now() - t0 };
  },
};

document.getElementById('status').textContent = 'ready';

/** The model file party `id` serves (fetched once): the ONNX file at P0, the shape file elsewhere. */
const modelFiles = new Map();
function modelFile(model, id) {
  const path = `/models/${model}.${id === 0 ? 'onnx' : 'rfshape'}`;
  if (!modelFiles.has(path)) modelFiles.set(path, fetch(path).then(async (r) => new Uint8Array(await r.arrayBuffer())));
  return modelFiles.get(path);
}
