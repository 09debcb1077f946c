#!/usr/bin/env node
// `npm run bench -w web`: 10^6 multiplications and 10^6 comparisons (lt) among three parties,
// and with `--ops ...,infer` a private classification (`--model lenet`, `--backend meteor`),
// in one run:
//
//   native            three `ringfence` processes: mul/lt on loopback TCP (`ringfence bench
//                     --json --plain`: plaintext links, as the wasm parties here have); infer
//                     through a local relay with Noise links (`ringfence bench --json --model M
//                     --backend B --relay URL`), as the wasm parties here have
//   wasm-node         three wasm parties (SIMD module), each in its own worker_threads Worker:
//                     mul/lt linked by MessageChannels that transfer each frame's buffer (no
//                     copy); infer: `Party.serve` through the relay to an SDK `Client` in the
//                     main thread (bench/serve-worker.mjs)
//   wasm-node-nosimd  the same with the non-SIMD module
//
// then one ratio line per operation and wasm runtime: wasm seconds / native seconds (infer:
// online and setup). Output: one JSON object per line on stdout, the fields of `ringfence bench
// --json` plus `runtime`; progress goes to stderr. Seconds are the mean of --repeat timed runs
// after one warm-up run, like the native bench.
//
// infer is not the same workload on both sides in one respect: the native bench shares the
// weights once, untimed, and times each run's preprocessing as setup, with P1 as the input
// owner; `Party.serve` serves each request from scratch, so its setup also shares the weights,
// and the input comes from (and the scores go to) a fourth participant, the client.
//
//   node bench/ops.mjs [--n 1000000] [--repeat 3] [--ops mul,lt[,infer]] [--model lenet]
//                      [--backend meteor|rep3] [--runtimes native,wasm-node,wasm-node-nosimd]
// Needs `npm run build -w web`; the native runtime needs `cargo build --release -p
// ringfence-relay --bin ringfence` (or `npm run demo` once), else it is skipped with a note;
// infer needs that binary too, for the relay.
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { MessageChannel, Worker } from 'node:worker_threads';
import { Client, generateNoiseKeypair, init, randomSessionId } from 'ringfence';
import { modelPath, referenceSample, ringfenceBinary, startRelay } from '../examples/local-deployment.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const n = Number(arg('n', 1_000_000));
const repeat = Number(arg('repeat', 3));
const allOps = arg('ops', 'mul,lt').split(',');
const ops = allOps.filter((op) => op !== 'infer'); // the operation benchmark's
const infer = allOps.includes('infer') ? { model: arg('model', 'lenet'), backend: arg('backend', 'meteor') } : null;
const runtimes = arg('runtimes', 'native,wasm-node,wasm-node-nosimd').split(',');
const say = (m) => process.stderr.write(`${m}\n`);
const emit = (o) => console.log(JSON.stringify(o));

const WORKER = new URL('./party-worker.mjs', import.meta.url);
const SERVE_WORKER = new URL('./serve-worker.mjs', import.meta.url);
const results = new Map(); // `${runtime} ${op}` -> seconds, and `${runtime} infer setup`

/** The native binary, or `undefined` (with a note) when it is not built. */
function nativeBinary() {
  try {
    return ringfenceBinary();
  } catch (e) {
    say(`native: ${e.message}: skipped`);
    return undefined;
  }
}

/** Runs `ringfence bench --json ...args` and emits its lines as the native runtime's. */
function nativeBench(bin, args) {
  say(`native: ringfence bench --json ${args.join(' ')}`);
  const r = spawnSync(bin, ['bench', '--json', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`ringfence bench exited with ${r.status ?? r.signal}`);
  for (const line of r.stdout.trim().split('\n')) {
    const o = { ...JSON.parse(line), runtime: 'native' };
    results.set(`native ${o.op}`, o.seconds);
    if (o.op === 'infer') results.set('native infer setup', o.setup_seconds);
    emit(o);
  }
}

function native(relayUrl) {
  const bin = nativeBinary();
  if (!bin) return;
  if (ops.length) nativeBench(bin, ['--plain', '--ops', ops.join(','), '--n', String(n), '--repeat', String(repeat)]);
  if (infer) nativeBench(bin, ['--model', infer.model, '--backend', infer.backend, '--repeat', String(repeat), '--relay', relayUrl]);
}

/** Three party workers joined over MessageChannels; resolves with the workers. */
async function startParties(module) {
  const link = () => new MessageChannel();
  const [c01, c02, c12] = [link(), link(), link()];
  const ports = [
    { 1: c01.port1, 2: c02.port1 },
    { 0: c01.port2, 2: c12.port1 },
    { 0: c02.port2, 1: c12.port2 },
  ];
  const sessionId = randomSessionId();
  const workers = ports.map(
    (p, id) => new Worker(WORKER, { workerData: { id, ports: p, sessionId, module }, transferList: Object.values(p) }),
  );
  await Promise.all(workers.map(async (w) => {
    const [msg] = await Promise.race([once(w, 'message'), once(w, 'error').then(([e]) => Promise.reject(e))]);
    if (!msg.joined) throw new Error('unexpected message from a party worker');
  }));
  return workers;
}

const next = (w) => once(w, 'message').then(([m]) => m);

/** One run of `op` at all three workers; returns wall seconds and party 0's counters. */
async function runOnce(workers, op) {
  const ready = workers.map(next);
  workers.forEach((w) => w.postMessage({ op, n }));
  await Promise.all(ready);
  const done = workers.map(next);
  const t0 = performance.now();
  workers.forEach((w) => w.postMessage('go'));
  const outs = await Promise.all(done);
  return { seconds: (performance.now() - t0) / 1000, stats: outs[0].stats };
}

const moduleOf = (runtime) => (runtime === 'wasm-node-nosimd' ? 'nosimd' : 'simd');

async function wasm(runtime) {
  if (!ops.length) return;
  const module = moduleOf(runtime);
  say(`${runtime}: three workers, ${module} module`);
  const workers = await startParties(module);
  try {
    for (const op of ops) {
      await runOnce(workers, op); // warm-up: compilation tiers, memory growth
      const runs = [];
      for (let r = 0; r < repeat; r++) runs.push(await runOnce(workers, op));
      const seconds = runs.reduce((a, r) => a + r.seconds, 0) / repeat;
      const s = runs[0].stats; // the same every run: the protocol's cost is data-independent
      results.set(`${runtime} ${op}`, seconds);
      emit({
        op, n, ring_bits: 64, seconds, ops_per_s: n / seconds,
        bytes_per_party: s.bytesSent, wire_bytes_per_party: s.bytesSent, rounds: s.rounds,
        backend: 'rep3', transport: 'message-channel', setup_seconds: null, setup_bytes_per_party: null,
        repeat, shape: null, payload_bytes_per_party: s.payloadBytesSent, runtime,
      });
    }
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/**
 * `infer` on wasm: three party workers serve the model to a client in this thread, `repeat`
 * timed requests after a warm-up one, on one session. Stage figures are the parties' own
 * (`Party.serve`): seconds the slowest party's, bytes the mean over the parties. The client
 * runs on the module `init()` picks whatever the runtime (a realm loads one module): it only
 * masks the input and adds up the scores, so the parties' module is what is measured.
 */
async function wasmInfer(runtime, relayUrl) {
  const module = moduleOf(runtime);
  const { model, backend } = infer;
  say(`${runtime}: infer ${model} (${backend}), three serving workers and a client, ${module} module`);
  await init();
  const keypairs = [0, 1, 2].map(() => generateNoiseKeypair());
  const clientKey = generateNoiseKeypair();
  const session = { relayUrl, sessionId: randomSessionId(), keypairs, clientPublicKey: clientKey.publicKey };
  const workerData = (id) => ({ ...session, id, module, model, modelFile: modelPath(model), requests: repeat + 1 });
  const workers = [0, 1, 2].map((id) => new Worker(SERVE_WORKER, { workerData: workerData(id) }));
  const failed = Promise.race(workers.map((w) => once(w, 'error').then(([e]) => Promise.reject(e))));
  failed.catch(() => {}); // raced below, at every wait
  const next = (w) => Promise.race([once(w, 'message').then(([m]) => m), failed]);
  const { input, expected } = referenceSample(model, 0);
  try {
    // The parties' links include the client's: they finish joining once it connects.
    const client = await Promise.race([
      Client.connect({ relay: relayUrl, session: session.sessionId, parties: keypairs.map((k) => k.publicKey), keypair: clientKey }),
      failed,
    ]);
    const runs = [];
    for (let r = 0; r <= repeat; r++) {
      const served = workers.map(next);
      const c = await client.classify(model, input, { backend });
      if (c.classes[0] !== expected) throw new Error(`${runtime}: class ${c.classes[0]}, the reference says ${expected}`);
      const stages = (await Promise.all(served)).map((m) => m.result.stages);
      if (r > 0) runs.push(stages); // the first one warms up
    }
    client.close();
    const mean = (f) => runs.reduce((a, stages) => a + f(stages), 0) / runs.length;
    const slowest = (stage) => (stages) => Math.max(...stages.map((s) => s[stage].ms)) / 1000;
    const perParty = (stage) => (stages) => stages.reduce((a, s) => a + s[stage].bytesSent, 0) / stages.length;
    const seconds = mean(slowest('online'));
    const setup = mean(slowest('setup'));
    const bytes = mean(perParty('online'));
    results.set(`${runtime} infer`, seconds);
    results.set(`${runtime} infer setup`, setup);
    emit({
      op: 'infer', n: 1, ring_bits: 64, seconds, ops_per_s: 1 / seconds,
      bytes_per_party: bytes, wire_bytes_per_party: null, rounds: Math.max(...runs[0].map((s) => s.online.rounds)),
      backend, transport: 'noise-aesgcm', setup_seconds: setup, setup_bytes_per_party: mean(perParty('setup')),
      repeat, shape: `${model} batch 1`, model, batch: 1, online_seconds: seconds, online_bytes_per_party: bytes,
      payload_bytes_per_party: null, network: 'relay', runtime,
    });
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

const wasmRuntimes = runtimes.filter((r) => r.startsWith('wasm-'));
// infer runs through a local relay (the SDK's parties and client link only through one).
const relay = infer ? await startRelay() : undefined;
try {
  if (runtimes.includes('native')) native(relay?.url);
  for (const rt of wasmRuntimes) await wasm(rt);
  if (infer) for (const rt of wasmRuntimes) await wasmInfer(rt, relay.url);
} finally {
  await relay?.stop();
}
for (const rt of wasmRuntimes) {
  for (const op of allOps) {
    const [w, nat] = [results.get(`${rt} ${op}`), results.get(`native ${op}`)];
    if (w === undefined || nat === undefined) continue;
    const ratio = { op, n: op === 'infer' ? 1 : n, runtime: `${rt}/native`, time_ratio: w / nat };
    if (op === 'infer') ratio.setup_time_ratio = results.get(`${rt} infer setup`) / results.get('native infer setup');
    emit(ratio);
  }
}
