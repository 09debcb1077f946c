#!/usr/bin/env node
// `npm run bench -w web`: 10^6 multiplications and 10^6 comparisons (lt) among three parties,
// in one run:
//
//   native            three `target/release/ringfence` processes on loopback TCP (`ringfence
//                     bench --json --plain`: plaintext links, as the wasm parties here have)
//   wasm-node         three wasm parties (SIMD module), each in its own worker_threads Worker,
//                     linked by MessageChannels that transfer each frame's buffer (no copy)
//   wasm-node-nosimd  the same with the non-SIMD module
//
// then one ratio line per operation and wasm runtime: wasm seconds / native seconds.
// Output: one JSON object per line on stdout, the fields of `ringfence bench --json` plus
// `runtime`; progress goes to stderr. Seconds are the mean of --repeat timed runs after one
// warm-up run, like the native bench.
//
//   node bench/ops.mjs [--n 1000000] [--repeat 3] [--ops mul,lt]
//                      [--runtimes native,wasm-node,wasm-node-nosimd]
// Needs `npm run build -w web`; the native runtime needs `cargo build --release -p
// ringfence-relay --bin ringfence` (or `npm run demo` once), else it is skipped with a note.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker } from 'node:worker_threads';
import { randomSessionId } from 'ringfence';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const n = Number(arg('n', 1_000_000));
const repeat = Number(arg('repeat', 3));
const ops = arg('ops', 'mul,lt').split(',');
const runtimes = arg('runtimes', 'native,wasm-node,wasm-node-nosimd').split(',');
const say = (m) => process.stderr.write(`${m}\n`);
const emit = (o) => console.log(JSON.stringify(o));

const NATIVE = fileURLToPath(new URL('../../target/release/ringfence', import.meta.url));
const WORKER = new URL('./party-worker.mjs', import.meta.url);
const results = new Map(); // `${runtime} ${op}` -> seconds

function native() {
  if (!existsSync(NATIVE)) {
    say(`native: ${NATIVE} is missing (cargo build --release -p ringfence-relay --bin ringfence): skipped`);
    return;
  }
  const args = ['bench', '--json', '--plain', '--ops', ops.join(','), '--n', String(n), '--repeat', String(repeat)];
  say(`native: ringfence ${args.join(' ')}`);
  const r = spawnSync(NATIVE, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`ringfence bench exited with ${r.status ?? r.signal}`);
  for (const line of r.stdout.trim().split('\n')) {
    const o = { ...JSON.parse(line), runtime: 'native' };
    results.set(`native ${o.op}`, o.seconds);
    emit(o);
  }
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

async function wasm(runtime) {
  const module = runtime === 'wasm-node-nosimd' ? 'nosimd' : 'simd';
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

if (runtimes.includes('native')) native();
for (const rt of runtimes.filter((r) => r.startsWith('wasm-'))) await wasm(rt);
for (const rt of runtimes.filter((r) => r.startsWith('wasm-'))) {
  for (const op of ops) {
    const [w, nat] = [results.get(`${rt} ${op}`), results.get(`native ${op}`)];
    if (w !== undefined && nat !== undefined) emit({ op, n, runtime: `${rt}/native`, time_ratio: w / nat });
  }
}
