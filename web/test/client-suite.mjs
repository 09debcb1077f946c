// The Client (input provider) against three NATIVE parties serving NN-A (`ringfence
// session-party` processes) through the native relay, run on both wasm modules (client.test.mjs,
// client-nosimd.test.mjs). Every session is fresh: a session party serves one request.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { BACKENDS, Client, encodeFixed, generateNoiseKeypair, randomSessionId, toHex } from 'ringfence';
import { rejectsWith, serveModel, startRelay } from './ws-relay.mjs';

const MODELS = new URL('../../models/', import.meta.url);
const NN_A = fileURLToPath(new URL('nn-a.onnx', MODELS));
const REFERENCE = JSON.parse(readFileSync(new URL('data/nn-a.reference.json', MODELS), 'utf8'));
const MNIST = readFileSync(new URL('data/mnist-test-1000.u8', MODELS));
const PIXELS = 28 * 28;
/** What the request costs the client: 3 frames of a 28-byte header and 6 words. */
const REQUEST_BYTES = 3 * (28 + 6 * 8);

/** Test sample `k` as the model takes it (pixels / 255, as in the reference file). */
const sample = (k) => Float32Array.from(MNIST.subarray(k * PIXELS, (k + 1) * PIXELS), (b) => b / 255);

export function defineClientSuite(name) {
  let relay;
  before(async () => {
    relay = await startRelay();
  });
  after(() => relay?.stop());

  /**
   * A fresh session: three native parties serving NN-A, stopped after the test, and the
   * client's connect options. `keypair: false` leaves the client's key to be generated: the
   * parties then start when `onPublicKey` hands it over, as a deployment would.
   */
  function deploy(t, { keypair = generateNoiseKeypair(), timeoutMs = 20_000 } = {}) {
    const keypairs = [0, 1, 2].map(() => generateNoiseKeypair());
    const session = randomSessionId();
    let parties;
    const start = (clientPublicKey) => {
      parties = serveModel({ relayUrl: relay.url, model: NN_A, sessionId: session, keypairs, clientPublicKey, timeoutMs });
    };
    t.after(() => parties?.stop());
    const options = { relay: relay.url, session, parties: keypairs.map((k) => k.publicKey), timeoutMs };
    if (keypair) {
      start(keypair.publicKey);
      options.keypair = keypair;
    } else {
      options.onPublicKey = start;
    }
    return { options, outcomes: () => parties.done };
  }

  test(`${name}: classifies MNIST like onnxruntime on every backend; what the parties got is noise`, async (t) => {
    const encoded = (x, fracBits) => BigUint64Array.from(encodeFixed(x, fracBits), (v) => BigInt.asUintN(64, v));
    // rss runs among five or seven servers (deployment.test.mjs, serve-suite.mjs), spdz2k with
    // one (deployment.test.mjs).
    for (const backend of BACKENDS.filter((b) => b !== 'rss' && b !== 'spdz2k')) {
      const runs = [];
      // The same sample twice, on two sessions; the second one generates the client's key.
      for (const keypair of [generateNoiseKeypair(), false]) {
        const d = deploy(t, { keypair });
        const events = [];
        const client = await Client.connect({ ...d.options, onProgress: (e) => events.push(e) });
        const r = await client.classify('nn-a', sample(0), { backend });
        client.close();
        const expected = REFERENCE.argmax[0];
        assert.deepEqual(r.classes, [expected], `${backend}: onnxruntime says ${expected}`);
        assert.deepEqual(r.labels, [expected], 'a model without labels answers the index');
        assert.equal(r.scores.length, 10);
        assert.equal(r.scores.indexOf(Math.max(...r.scores)), expected);
        // The range comes from nn-a.onnx's metadata, through the native parties' description.
        assert.deepEqual(r.model, { inputLen: PIXELS, outputLen: 10, fracBits: r.model.fracBits, inputRange: [0, 1] });
        assert.deepEqual(events.map((e) => e.stage), ['connecting', 'request', 'setup', 'online', 'done']);
        for (let i = 1; i < events.length; i++) assert.ok(events[i].bytesSent >= events[i - 1].bytesSent);
        assert.equal(events[2].bytesSent, REQUEST_BYTES, 'the setup starts after the request only');
        assert.ok(r.stats.bytesSent > PIXELS * 8 && r.stats.bytesReceived > 0 && r.stats.rounds >= 4, JSON.stringify(r.stats));
        for (const k of ['request', 'setup', 'online']) assert.ok(r.timings[k] > 0, `${k}: ${r.timings[k]}`);
        for (const o of await d.outcomes()) {
          assert.ok(o.ok, `${o.message}\n${o.stderr}`);
          assert.ok(o.report.online_bytes > 0);
        }
        runs.push(r);
      }
      const x = encoded(sample(0), runs[0].model.fracBits);
      for (const [i, view] of runs[0].sent.entries()) {
        const other = runs[1].sent[i];
        assert.equal(view.length, PIXELS);
        const same = view.filter((v, k) => v === other[k]).length;
        const clear = view.filter((v, k) => v === x[k]).length;
        assert.ok(same <= 1 && clear <= 1, `${backend} P${i}: ${same} values repeated across sessions, ${clear} in the clear`);
      }
      for (const r of runs) {
        if (backend === 'meteor') {
          assert.deepEqual(r.sent[1], r.sent[0], 'the masked input is the same at every party');
          assert.deepEqual(r.sent[2], r.sent[0]);
        } else {
          const sum = x.map((_, k) => BigInt.asUintN(64, r.sent[0][k] + r.sent[1][k] + r.sent[2][k]));
          assert.deepEqual(sum, x, 'the three components add up to the input');
        }
      }
    }
    // rep3 and mal3 can reveal the class alone.
    for (const backend of ['rep3', 'mal3']) {
      const d = deploy(t);
      const client = await Client.connect(d.options);
      const r = await client.classify('nn-a', Array.from(sample(1)), { backend, output: 'class' });
      client.close();
      assert.deepEqual(r.classes, [REFERENCE.argmax[1]], backend);
      assert.equal(r.scores, undefined);
    }
  });

  test(`${name}: an unknown model is refused with the parties' reason, and ends the session`, async (t) => {
    const d = deploy(t);
    const client = await Client.connect(d.options);
    const e = await rejectsWith(client.classify('lenet', sample(0)), 'REFUSED');
    assert.match(e.message, /refused the request: unknown model "lenet": this deployment does not serve it$/);
    assert.ok([0, 1, 2].includes(e.peer), `peer ${e.peer}`);
    assert.equal(await client.classify('nn-a', sample(0)).catch((x) => x), e, 'later calls fail with the same error');
    client.close();
    for (const o of await d.outcomes()) assert.match(o.message, /refused the client.s request: unknown model "lenet"/);
  });

  test(`${name}: bad input fails with a precise code before anything is sent`, async (t) => {
    const d = deploy(t);
    const events = [];
    const client = await Client.connect({ ...d.options, onProgress: (e) => events.push(e) });
    const nan = sample(0);
    nan[300] = NaN;
    const cases = [
      [nan, {}, 'OUT_OF_RANGE', /input\[300\] is NaN/],
      [[...sample(0).subarray(1), Infinity], {}, 'OUT_OF_RANGE', /input\[783\] is Infinity/],
      ['pixels', {}, 'INVALID_ARGUMENT', /input must be a number\[\] or a typed array of numbers .*, got string/],
      [new BigInt64Array(PIXELS), {}, 'INVALID_ARGUMENT', /input must be a number\[\] or a typed array of numbers .*, got BigInt64Array/],
      // Raw canvas pixels for a model trained on [0, 1]: refused, saying how to scale them.
      [Uint8ClampedArray.from(MNIST.subarray(0, PIXELS)), { inputRange: [0, 1] }, 'OUT_OF_RANGE',
        /^input\[\d+\] is \d+, outside the model's input range \[0, 1\]: divide 0–255 pixels by 255$/],
      [Float64Array.from(sample(0), (v) => v * 2 - 1), { inputRange: [0, 1] }, 'OUT_OF_RANGE', /^input\[0\] is -1, outside .*\[0, 1\]: scale it to \[0, 1\]$/],
      [sample(0), { inputRange: [1, 0] }, 'INVALID_ARGUMENT', /inputRange must be \[min, max\] with finite min <= max, got \[1,0\]/],
      [sample(0), { inputRange: [0] }, 'INVALID_ARGUMENT', /inputRange must be \[min, max\]/],
      [[0.5, '1'], {}, 'INVALID_ARGUMENT', /input\[1\] must be a number/],
      [sample(0), { backend: 'spdz' }, 'INVALID_ARGUMENT', /unknown backend "spdz"/],
      [sample(0), { output: 'logits' }, 'INVALID_ARGUMENT', /unknown output "logits"/],
      [sample(0), { batch: 0.5 }, 'INVALID_ARGUMENT', /batch must be an integer/],
    ];
    for (const [input, options, code, message] of cases) {
      const e = await rejectsWith(client.classify('nn-a', input, options), code);
      assert.match(e.message, message);
      assert.deepEqual(client.stats(), { bytesSent: 0, bytesReceived: 0, rounds: 0 }, `nothing sent for ${e.message}`);
    }
    // The client is still fresh: the parties are waiting for its (first) request.
    const r = await client.classify('nn-a', sample(2), { inputRange: [0, 1] });
    client.close();
    assert.deepEqual(r.classes, [REFERENCE.argmax[2]]);
    assert.deepEqual(r.model.inputRange, [0, 1], 'the range it was checked against');
    for (const o of await d.outcomes()) assert.ok(o.ok, o.message);
    assert.ok(events.length > 5);

    // The length needs the model's input size: checked when the parties describe the model,
    // before the setup and the input. The session then ends (the parties are mid-protocol).
    const d2 = deploy(t);
    const stages = [];
    const c2 = await Client.connect({ ...d2.options, onProgress: (e) => stages.push(e.stage) });
    const e = await rejectsWith(c2.classify('nn-a', sample(0).subarray(1)), 'LENGTH_MISMATCH');
    assert.match(e.message, /input has 783 values; the model takes 784 per sample/);
    assert.deepEqual(stages, ['connecting', 'request']);
    assert.equal(c2.stats().bytesSent, REQUEST_BYTES, 'only the request went out');
    assert.equal(await c2.classify('nn-a', sample(0)).catch((x) => x), e);
    c2.close();
    for (const o of await d2.outcomes()) assert.equal(o.ok, false, 'the parties lost their client');

    // So is the range the parties describe (nn-a.onnx says [0, 1]): raw 0–255 pixels, as a
    // canvas gives them, are refused with how to scale them, before the setup.
    const d3 = deploy(t);
    const c3 = await Client.connect(d3.options);
    const raw = Uint8ClampedArray.from(MNIST.subarray(0, PIXELS));
    const e3 = await rejectsWith(c3.classify('nn-a', raw), 'OUT_OF_RANGE');
    assert.match(e3.message, /^input\[\d+\] is \d+, outside the model's input range \[0, 1\]: divide 0–255 pixels by 255$/);
    assert.equal(c3.stats().bytesSent, REQUEST_BYTES, 'only the request went out');
    c3.close();
    await d3.outcomes();
  });

  test(`${name}: ids and keys in hex connect as bytes do; integer typed arrays are input`, async (t) => {
    const keypair = generateNoiseKeypair();
    const d = deploy(t, { keypair });
    const o = d.options;
    const client = await Client.connect({
      ...o,
      session: toHex(o.session),
      parties: o.parties.map((k, i) => (i === 1 ? toHex(k).toUpperCase() : toHex(k))),
      keypair: { privateKey: toHex(keypair.privateKey), publicKey: toHex(keypair.publicKey) },
    });
    assert.deepEqual(client.publicKey, keypair.publicKey);
    // The parties answered the request over the Noise links (so the hex keys were right); a
    // Uint8ClampedArray passed the type check and reached the model's length check.
    const e = await rejectsWith(client.classify('nn-a', new Uint8ClampedArray(PIXELS - 1)), 'LENGTH_MISMATCH');
    assert.match(e.message, /input has 783 values; the model takes 784 per sample/);
    client.close();
  });

  /** An rf2 token's shape, bound to `key` (hex); the signature is not checked by the client. */
  const boundToken = (key) => `rf2.acme.${'00'.repeat(16)}.3.${key}.4000000000.${'00'.repeat(64)}`;

  test(`${name}: connect checks its options, honours the signal, times out and reports a dead relay`, async () => {
    // Nobody serves these sessions: the handshakes wait until the abort, or the timeout.
    const options = {
      relay: relay.url,
      session: randomSessionId(),
      parties: [0, 1, 2].map(() => generateNoiseKeypair().publicKey),
      keypair: generateNoiseKeypair(),
      timeoutMs: 20_000,
    };
    const generated = { ...options, keypair: undefined };
    const bad = [
      [{ ...options, parties: [...options.parties, options.parties[0]] }, /parties must list the deployment's 1, 2, 3, 5 or 7 server parties' public keys/],
      [{ ...options, relay: 'http://x' }, /relay must start with ws:\/\//],
      [{ ...options, session: new Uint8Array(8) }, /session must be 16 bytes/],
      [{ ...options, session: 'zz'.repeat(16) }, /session must be 16 bytes \(a Uint8Array, or 32 hex digits\)/],
      [{ ...options, parties: [...options.parties.slice(1), 'ab'.repeat(31)] }, /parties must list .*64 hex digits each/],
      [{ ...options, keypair: { ...options.keypair, privateKey: 'x' } }, /keypair must be \{privateKey, publicKey\}/],
      [generated, /without a keypair or a deployment, onPublicKey must/],
      [{ ...options, timeoutMs: -1 }, /timeoutMs must be a positive integer/],
      // A token bound to a client key (rf2) needs that keypair: before anything is sent.
      [{ ...generated, deployment: 'acme', token: boundToken('cd'.repeat(32)) }, /the token is bound to a client key \(rf2\): pass the keypair/],
      [{ ...options, deployment: 'acme', token: boundToken('cd'.repeat(32)) }, /bound to another client key than keypair's/],
    ];
    for (const [o, message] of bad) assert.match((await rejectsWith(Client.connect(o), 'INVALID_ARGUMENT')).message, message);

    const reason = new Error('user left');
    const aborted = await rejectsWith(Client.connect({ ...options, signal: AbortSignal.abort(reason) }), 'ABORTED');
    assert.equal(aborted.cause, reason);

    const lonely = { ...options, session: randomSessionId() };
    const ac = new AbortController();
    const t0 = performance.now();
    setTimeout(() => ac.abort(reason), 200);
    assert.equal((await rejectsWith(Client.connect({ ...lonely, signal: ac.signal }), 'ABORTED')).cause, reason);
    assert.ok(performance.now() - t0 < 5_000, 'the abort ends connect at once');
    await rejectsWith(Client.connect({ ...lonely, session: randomSessionId(), timeoutMs: 300 }), 'TIMEOUT');

    const gone = await startRelay();
    await gone.stop();
    const refused = await rejectsWith(Client.connect({ ...lonely, relay: gone.url }), 'TRANSPORT');
    assert.match(refused.message, new RegExp(`joining the relay at ${gone.url}`));
  });

  test(`${name}: aborting during a classification rejects it and every later call`, async (t) => {
    const d = deploy(t);
    const ac = new AbortController();
    const reason = new Error('cancelled by the user');
    const client = await Client.connect({
      ...d.options,
      signal: ac.signal,
      onProgress: (e) => e.stage === 'setup' && ac.abort(reason),
    });
    const e = await rejectsWith(client.classify('nn-a', sample(0)), 'ABORTED');
    assert.equal(e.cause, reason);
    assert.equal((await rejectsWith(client.classify('nn-a', sample(0)), 'ABORTED')).cause, reason);
    client.close();
  });

  test(`${name}: one classification at a time; closing during one rejects it`, async (t) => {
    const d = deploy(t);
    let client;
    client = await Client.connect({ ...d.options, onProgress: (e) => e.stage === 'online' && client.close() });
    const first = client.classify('nn-a', sample(0));
    await rejectsWith(client.classify('nn-a', sample(0)), 'API_MISUSE');
    assert.match((await rejectsWith(first, 'API_MISUSE')).message, /the client is closed/);
    assert.equal(client.stats().bytesSent, REQUEST_BYTES, 'closed before the input went out');
    for (const o of await d.outcomes()) assert.equal(o.ok, false, 'the parties lost their client');
  });
}
