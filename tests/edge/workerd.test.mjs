// The SDK inside workerd, Cloudflare's Workers runtime (npm `workerd`), as an ES module Worker
// (worker.mjs) with the wasm bundled as a compiled module, all traffic on 127.0.0.1:
//   - `init()` left to find the module itself fails with WASM_LOAD, saying how to pass it;
//   - input provider: the worker is the `Client` of `ringfence local-deployment` (relay + three
//     native server parties) and classifies a held-out MNIST digit with LeNet (METEOR); the
//     class must be onnxruntime's;
//   - compute party: the worker is P0 (the model owner) serving NN-A beside two native
//     `ringfence session-party` processes, to an SDK client in this process; the client's
//     class must be onnxruntime's and the worker must report the request answered.
// Skipped, saying why, only when the workerd binary cannot start on this machine.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client, generateNoiseKeypair, init, randomSessionId } from '../../web/dist/index.js';
import { modelPath, referenceSample, serveModel, startLocalDeployment, startRelay } from '../../web/examples/local-deployment.mjs';
import { findWorkerd, startWorker } from './workerd.mjs';

const TIMEOUT_MS = 30_000;
const hex = (b) => Buffer.from(b).toString('hex');
const workerd = findWorkerd();

/** POSTs `body` to the worker's `route`; returns its JSON answer, failing on an error answer. */
async function call(worker, route, body) {
  const res = await fetch(`${worker.url}${route}`, { method: 'POST', body: JSON.stringify(body) });
  const text = await res.text();
  let out;
  try {
    out = JSON.parse(text);
  } catch {
    assert.fail(`worker ${route}: HTTP ${res.status} ${text}\nworkerd log:\n${worker.log.join('\n')}`);
  }
  assert.ok(res.ok && !out.error, `worker ${route}: HTTP ${res.status} ${JSON.stringify(out.error)}\nworkerd log:\n${worker.log.join('\n')}`);
  // Workers cannot compile wasm from bytes: the SIMD module came in as a compiled import.
  assert.deepEqual(out.info, { simdSupported: true, module: 'simd' });
  return out;
}

// Every session has its own 30 s timeouts; the whole file takes about 5 s.
describe(`ringfence in ${workerd.version ?? 'workerd'}`, { skip: workerd.skip, timeout: 120_000 }, () => {
  let worker;
  before(async () => {
    await init();
    worker = await startWorker(workerd.bin, {
      script: fileURLToPath(new URL('./worker.mjs', import.meta.url)),
      data: { 'models/nn-a.onnx': modelPath('nn-a') },
    });
  });
  after(() => worker?.stop());

  // First: once a request loaded the module, init() returns that in this isolate.
  test('init() without the compiled module fails with WASM_LOAD saying how to pass it', async () => {
    const res = await fetch(`${worker.url}/init-default`, { method: 'POST' });
    const e = await res.json();
    assert.equal(e.code, 'WASM_LOAD', e.message);
    assert.match(e.message, /import simd from 'ringfence\/wasm-simd\.wasm'; await init\(\{ wasm: \{ simd \} \}\)/);
  });

  test('a worker as the input provider gets the class onnxruntime gives a digit (LeNet, METEOR)', async (t) => {
    const d = await startLocalDeployment({ webTransport: false });
    t.after(() => d.stop());
    const { input, expected } = referenceSample('lenet', 3);
    const o = d.clientOptions();
    const out = await call(worker, '/classify', {
      relay: o.relay, deployment: o.deployment, session: hex(o.session), token: o.token,
      keypair: { privateKey: hex(o.keypair.privateKey), publicKey: hex(o.keypair.publicKey) }, parties: o.parties.map(hex),
      model: 'lenet', input: Array.from(input), backend: 'meteor', timeoutMs: TIMEOUT_MS,
    });
    assert.deepEqual(out.classes, [expected]);
    assert.equal(out.transport, 'websocket');
  });

  test('a worker as compute party P0 serves NN-A with two native parties to a client', async (t) => {
    const relay = await startRelay();
    t.after(() => relay.stop());
    const keypairs = [0, 1, 2].map(() => generateNoiseKeypair());
    const clientKey = generateNoiseKeypair();
    const sessionId = randomSessionId();
    const natives = serveModel({
      relayUrl: relay.url, model: modelPath('nn-a'), sessionId, keypairs, clientPublicKey: clientKey.publicKey,
      ids: [1, 2], timeoutMs: TIMEOUT_MS,
    });
    t.after(() => natives.stop());
    const party = call(worker, '/serve', {
      relay: relay.url, session: hex(sessionId), id: 0, privateKey: hex(keypairs[0].privateKey),
      publicKeys: [...keypairs.map((k) => hex(k.publicKey)), hex(clientKey.publicKey)], timeoutMs: TIMEOUT_MS,
    });
    const { input, expected } = referenceSample('nn-a', 5);
    const classify = (async () => {
      const client = await Client.connect({
        relay: relay.url, session: sessionId, parties: keypairs.map((k) => k.publicKey), keypair: clientKey, timeoutMs: TIMEOUT_MS,
      });
      try {
        return await client.classify('nn-a', input, { backend: 'meteor' });
      } finally {
        client.close();
      }
    })();
    // Settle both before asserting: a failing party must fail the test, not hang it.
    const [served, classified] = await Promise.allSettled([party, classify]);
    if (served.status === 'rejected') throw served.reason;
    if (classified.status === 'rejected') throw classified.reason;
    assert.deepEqual(classified.value.classes, [expected]);
    assert.deepEqual(served.value, {
      info: served.value.info, outcome: 'answered', request: { model: 'nn-a', backend: 'meteor', output: 'scores', batch: 1 },
    });
    const outcomes = await natives.done;
    for (const o of outcomes) assert.ok(o.ok, `native P${o.id}: ${o.message}\n${o.stderr}`);
  });
});
