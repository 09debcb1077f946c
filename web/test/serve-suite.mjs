// SDK compute parties serving a model (`Party.serve`) to the SDK `Client`, run on both wasm
// modules (serve.test.mjs, serve-nosimd.test.mjs): one SDK party beside two native `ringfence
// session-party` processes (as the model owner P0, and as P2), three SDK parties, malformed models
// and refused requests. Every session is fresh and goes through the native relay. As in a real
// deployment P0 serves the ONNX file and P1 and P2 its weight-free shape file (`modelShape`).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Client, InMemoryNetwork, Party, generateNoiseKeypair, insecureTestSeeds, modelShape, randomSessionId } from 'ringfence';
import { joinServingParty, modelPath, referenceSample } from '../examples/local-deployment.mjs';
import { rejectsWith, serveModel, startRelay } from './ws-relay.mjs';

const NN_A = modelPath('nn-a');
const NN_A_BYTES = readFileSync(NN_A);
const TIMEOUT_MS = 20_000;

/** What party `id` serves of the ONNX model `onnx`: P0 the file, P1 and P2 its shape; scores allowed. */
const served = (id, onnx = NN_A_BYTES) => ({ model: id === 0 ? onnx : modelShape(onnx), output: 'scores' });

/** Held-out MNIST digit `k` (pixels / 255) and onnxruntime's class for it. */
const digit = (k) => referenceSample('nn-a', k);
const sample = (k) => digit(k).input;

export function defineServeSuite(name) {
  let relay;
  before(async () => {
    relay = await startRelay();
  });
  after(() => relay?.stop());

  /**
   * A fresh session of which this process runs the SDK parties `sdk` (the others are native
   * processes serving NN-A, stopped after the test) and the client. `serve(party, id)` is what
   * each SDK party does once joined (by default: serve NN-A). Returns `{ client, sdk, native }`:
   * the connected client, the SDK parties' results (a promise of `{ id, result, events }`
   * each, in `sdk` order) and the native parties' outcomes (a promise).
   */
  async function deploy(t, sdk, serve = (party, id) => party.serve({ models: { 'nn-a': served(id) } }), servers = 3) {
    const keypairs = Array.from({ length: servers }, () => generateNoiseKeypair());
    const clientKey = generateNoiseKeypair();
    const sessionId = randomSessionId();
    const common = { relayUrl: relay.url, sessionId, keypairs, clientPublicKey: clientKey.publicKey, timeoutMs: TIMEOUT_MS };
    const ids = keypairs.map((_, id) => id).filter((id) => !sdk.includes(id));
    const natives = ids.length ? serveModel({ ...common, model: NN_A, ids }) : undefined;
    t.after(() => natives?.stop());
    const parties = sdk.map(async (id) => {
      const events = [];
      const s = await joinServingParty({ ...common, id, onProgress: (e) => events.push(e) });
      try {
        const result = await serve(s.party, id);
        s.party.finish();
        return { id, result, events };
      } finally {
        s.close();
      }
    });
    // A party failing early must fail the test, not hang it: settle them all before asserting.
    const settled = Promise.allSettled(parties).then((all) => all.map((r) => {
      if (r.status === 'rejected') throw r.reason;
      return r.value;
    }));
    const client = await Client.connect({
      relay: relay.url, session: sessionId, parties: keypairs.map((k) => k.publicKey), keypair: clientKey, timeoutMs: TIMEOUT_MS,
    });
    return { client, sdk: settled, native: natives?.done ?? Promise.resolve([]) };
  }

  /** Checks an SDK party's answered result and the progress it reported. */
  function checkAnswered({ id, result, events }, backend) {
    assert.equal(result.outcome, 'answered', `P${id}: ${result.reason}`);
    assert.deepEqual(result.request, { model: 'nn-a', backend, output: 'scores', batch: 1 });
    for (const stage of ['request', 'setup', 'online']) {
      const f = result.stages[stage];
      assert.ok(f.bytesSent > 0 && f.bytesReceived > 0 && f.rounds > 0 && f.ms > 0, `P${id} ${stage}: ${JSON.stringify(f)}`);
    }
    const serving = events.filter((e) => e.operation === 'serve');
    assert.deepEqual(serving.map((e) => e.stage), ['setup', 'online', 'done']);
    assert.deepEqual(events.map((e) => e.operation), ['join', 'join', 'serve', 'serve', 'serve', 'finish']);
    // The events carry the counters the stages are measured between.
    assert.equal(serving[2].bytesSent - serving[1].bytesSent, result.stages.online.bytesSent);
    assert.equal(serving[1].rounds - serving[0].rounds, result.stages.setup.rounds);
  }

  for (const sdkId of [0, 2]) {
    test(`${name}: an SDK party as P${sdkId} with two native parties classifies MNIST like onnxruntime`, async (t) => {
      for (const [k, backend] of [[0, 'meteor'], [3, 'rep3']]) {
        const d = await deploy(t, [sdkId]);
        const r = await d.client.classify('nn-a', sample(k), { backend });
        d.client.close();
        assert.deepEqual(r.classes, [digit(k).expected], `${backend}: onnxruntime says ${digit(k).expected}`);
        const [sdk] = await d.sdk;
        checkAnswered(sdk, backend);
        for (const o of await d.native) {
          assert.ok(o.ok, `native P${o.id}: ${o.message}\n${o.stderr}`);
          assert.ok(o.report.online_bytes > 0);
        }
      }
    });
  }

  test(`${name}: an SDK party as P3 of five serves rss with four native parties like onnxruntime`, async (t) => {
    const d = await deploy(t, [3], undefined, 5);
    const r = await d.client.classify('nn-a', sample(11), { output: 'class' });
    d.client.close();
    assert.deepEqual(r.classes, [digit(11).expected], `onnxruntime says ${digit(11).expected}`);
    assert.equal(r.sent.length, 5);
    const [sdk] = await d.sdk;
    assert.equal(sdk.result.outcome, 'answered', sdk.result.reason);
    assert.deepEqual(sdk.result.request, { model: 'nn-a', backend: 'rss', output: 'class', batch: 1 });
    const natives = await d.native;
    assert.equal(natives.length, 4);
    for (const o of natives) assert.ok(o.ok, `native P${o.id}: ${o.message}\n${o.stderr}`);
  });

  test(`${name}: three SDK parties serve the SDK client on every backend`, async (t) => {
    for (const [k, backend] of [[5, 'meteor'], [7, 'rep3'], [9, 'mal3']]) {
      const d = await deploy(t, [0, 1, 2]);
      const r = await d.client.classify('nn-a', sample(k), { backend });
      d.client.close();
      assert.deepEqual(r.classes, [digit(k).expected], `${backend}: onnxruntime says ${digit(k).expected}`);
      const served = await d.sdk;
      for (const s of served) checkAnswered(s, backend);
      // The three run the same protocol in lockstep: the same rounds in every stage.
      for (const stage of ['request', 'setup', 'online']) {
        const rounds = served.map((s) => s.result.stages[stage].rounds);
        assert.ok(rounds.every((x) => x === rounds[0]), `${stage}: ${rounds}`);
      }
    }
  });

  test(`${name}: a model fitted on names answers the name, told by the owner through shape files`, async (t) => {
    // scikit-learn's MLP fitted on the iris species' names (core-rs/tests/data/exported).
    const exported = new URL('../../core-rs/tests/data/exported/', import.meta.url);
    const onnx = readFileSync(new URL('iris-names-mlp.onnx', exported));
    const reference = JSON.parse(readFileSync(new URL('iris-names-mlp.json', exported), 'utf8'));
    const d = await deploy(t, [0, 1, 2], (party, id) => party.serve({ models: { iris: served(id, onnx) } }));
    const r = await d.client.classify('iris', reference.inputs.slice(4, 8), { backend: 'rep3' });
    d.client.close();
    assert.deepEqual(r.model.classLabels, ['setosa', 'versicolor', 'virginica']);
    assert.deepEqual(r.labels, [reference.labels[1]], 'onnxruntime’s label');
    assert.deepEqual(r.labels, r.classes.map((c) => r.model.classLabels[c]));
    for (const s of await d.sdk) assert.equal(s.result.outcome, 'answered', s.result.reason);
  });

  test(`${name}: three SDK parties comparing on multi-fan-in gates answer rep3 in fewer online rounds`, async (t) => {
    const rounds = {};
    for (const comparisons of ['two-input', 'fan-in']) {
      const d = await deploy(t, [0, 1, 2], (party, id) => party.serve({ models: { 'nn-a': served(id) }, comparisons }));
      const r = await d.client.classify('nn-a', sample(4), { backend: 'rep3' });
      d.client.close();
      assert.deepEqual(r.classes, [digit(4).expected], `${comparisons}: onnxruntime says ${digit(4).expected}`);
      const answered = await d.sdk;
      for (const s of answered) checkAnswered(s, 'rep3');
      rounds[comparisons] = answered[0].result.stages.online.rounds;
    }
    // NN-A's scores pass three ReLU layers: each comparison takes 3 rounds instead of 8.
    assert.equal(rounds['two-input'] - rounds['fan-in'], 3 * 5, JSON.stringify(rounds));
  });

  test(`${name}: a malformed model fails with INVALID_MODEL before anything is sent; an unknown model is refused`, async (t) => {
    const garbage = new Uint8Array([0x08, 0x07, 0x3a, 0xff]);
    const bad = [
      [{ models: { 'nn-a': garbage } }, 'INVALID_MODEL', /^model "nn-a" \(4 bytes\): malformed ONNX: /],
      [{ models: { 'nn-a': NN_A_BYTES.subarray(0, NN_A_BYTES.length >> 1) } }, 'INVALID_MODEL', /^model "nn-a" \(\d+ bytes\): malformed ONNX/],
      [{ models: {} }, 'INVALID_ARGUMENT', /models must name at least one model/],
      [{ models: NN_A_BYTES }, 'INVALID_ARGUMENT', /models must be an object \{name: model bytes\}, got Buffer/],
      [{ models: { 'nn-a': [1, 2] } }, 'INVALID_ARGUMENT', /models\["nn-a"\]: model must be a Uint8Array, got undefined/],
      [{ models: { 'nn-a': 7 } }, 'INVALID_ARGUMENT', /models\["nn-a"\] \(the model file, a Uint8Array, or \{model, output\}\) must be an object, got number/],
      [{ models: { 'nn-a': { model: NN_A_BYTES, output: 'all' } } }, 'INVALID_ARGUMENT', /output must be 'class' or 'scores', got string/],
      [{ models: { 'nn-a': { model: garbage } } }, 'INVALID_MODEL', /malformed ONNX/],
      [{ models: { ['x'.repeat(33)]: NN_A_BYTES } }, 'INVALID_ARGUMENT', /1 to 32 bytes/],
      [{ models: { 'nn-a': NN_A_BYTES }, maxBatch: 0 }, 'INVALID_ARGUMENT', /maxBatch must be at least 1/],
      [{ models: { 'nn-a': NN_A_BYTES }, client: 2 }, 'API_MISUSE', /client 2 is not a client of this session/],
      [{ models: { 'nn-a': NN_A_BYTES }, comparisons: 'fan-in:9,4' }, 'INVALID_ARGUMENT', /groups of 9 \(1\.\.=8\)/],
      [{ models: { 'nn-a': NN_A_BYTES }, comparisons: 4 }, 'INVALID_ARGUMENT', /comparisons must be a string, got number/],
      [null, 'INVALID_ARGUMENT', /needs an options object/],
    ];
    const d = await deploy(t, [0, 1, 2], async (party, id) => {
      const before = party.stats();
      // Only the model owner may hold the weights (unless they are public); it needs them.
      const wrongFile = id === 0
        ? [{ models: { 'nn-a': modelShape(NN_A_BYTES) } }, 'INVALID_ARGUMENT', /shape file, without weights, and P0 is the model owner/]
        : [{ models: { 'nn-a': NN_A_BYTES } }, 'INVALID_ARGUMENT', new RegExp(`holds the model's weights \\(ONNX\\), and P${id} is not the model owner.*public = true`)];
      for (const [options, code, message] of [...bad, wrongFile]) {
        assert.match((await rejectsWith(party.serve(options), code)).message, message);
      }
      assert.deepEqual(party.stats(), before, 'nothing was sent');
      // The party is still fresh: it serves the client's (refused) request.
      return party.serve({ models: { 'nn-a': served(id), 'nn-b': served(id, readFileSync(modelPath('nn-b'))) } });
    });
    const e = await rejectsWith(d.client.classify('lenet', sample(0)), 'REFUSED');
    d.client.close();
    assert.match(e.message, /refused the request: unknown model "lenet": this deployment does not serve it$/);
    for (const { id, result, events } of await d.sdk) {
      assert.equal(result.outcome, 'refused', `P${id}`);
      assert.equal(result.reason, 'unknown model "lenet": this deployment does not serve it');
      assert.ok(result.stages.request.bytesSent > 0 && result.stages.request.rounds > 0, JSON.stringify(result.stages));
      assert.deepEqual(Object.keys(result.stages), ['request']);
      assert.deepEqual(events.filter((e) => e.operation === 'serve'), [], 'no stage started');
    }
  });

  test(`${name}: a model served with the defaults reveals only the class: the scores are refused, the class answered`, async (t) => {
    const d = await deploy(t, [0, 1, 2], (party, id) =>
      party.serve({ models: { 'nn-a': { model: id === 0 ? NN_A_BYTES : modelShape(NN_A_BYTES) } } }));
    const e = await rejectsWith(d.client.classify('nn-a', sample(0), { backend: 'meteor' }), 'REFUSED');
    d.client.close();
    assert.match(e.message, /model "nn-a" reveals only the class, not the scores \(its owner's choice\): ask for the class on rep3/);
    for (const { result } of await d.sdk) assert.equal(result.outcome, 'refused');
    const c = await deploy(t, [0, 1, 2], (party, id) =>
      party.serve({ models: { 'nn-a': id === 0 ? NN_A_BYTES : modelShape(NN_A_BYTES) } }));
    const r = await c.client.classify('nn-a', sample(2), { backend: 'rep3', output: 'class' });
    c.client.close();
    assert.deepEqual(r.classes, [digit(2).expected]);
    assert.equal(r.scores, undefined);
    for (const { result } of await c.sdk) assert.deepEqual(result.request, { model: 'nn-a', backend: 'rep3', output: 'class', batch: 1 });
  });

  test(`${name}: a party whose session has no client cannot serve`, async () => {
    const net = new InMemoryNetwork(3);
    const sessionId = randomSessionId();
    const parties = await Promise.all([0, 1, 2].map(async (id) =>
      Party.join({ id, sessionId, seeds: await insecureTestSeeds('serve', id), transport: net.transport(id) })));
    const e = await rejectsWith(parties[0].serve({ models: { 'nn-a': NN_A_BYTES } }), 'API_MISUSE');
    assert.match(e.message, /client 3 is not a client of this session \(its 3 participants are the parties 0 to 2 only\)/);
    // The check ran before anything was sent: the parties still compute together.
    const x = await Promise.all(parties.map((p, id) => p.input(0, id === 0 ? BigInt64Array.of(6n) : null, 1)));
    const y = await Promise.all(parties.map((p, id) => p.mul(x[id], x[id])));
    assert.deepEqual([...(await Promise.all(parties.map((p, id) => p.reveal(y[id]))))[0]], [36n]);
    net.close();
    const lone = new InMemoryNetwork(3);
    const join = Party.join({ id: 0, sessionId, seeds: await insecureTestSeeds('serve', 0), transport: lone.transport(0), parties: 2 });
    assert.match((await rejectsWith(join, 'INVALID_ARGUMENT')).message, /parties must be at least 3/);
    lone.close();
  });
}
