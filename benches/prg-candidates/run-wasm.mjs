// Runs every `bench_<name>_{1m,4k}` export of a prg-candidates .wasm module in Node and prints
// `name<TAB>workload<TAB>GB/s` (GB = 1e9 bytes), best of 7 runs timed by process CPU time, of ~0.12 s after calibration.
// Usage: node run-wasm.mjs FILE.wasm [expect-simd:0|1] [name-filter...]
import { readFile } from 'node:fs/promises';

// Process CPU time (user+sys) in seconds: other jobs on the shared machine that preempt us do not
// count against a run. After calibration V8 has tiered up, so its helper threads are idle.
const cpuNow = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };

const [file, expectSimd, ...filters] = process.argv.slice(2);
const { instance } = await WebAssembly.instantiate(await readFile(file), {});
const ex = instance.exports;
const simd = ex.simd128_enabled();
if (expectSimd !== undefined && String(simd) !== expectSimd) {
  console.error(`${file}: simd128_enabled() = ${simd}, expected ${expectSimd}`);
  process.exit(1);
}
console.log(`#digest\t${BigInt.asUintN(64, ex.core_digest()).toString(16).padStart(16, '0')}`);
const BYTES = { '1m': 1 << 20, '4k': 4096 };

function measure(f, bytesPerIter) {
  let iters = 1;
  for (;;) {
    const t = cpuNow();
    f(iters);
    const dt = cpuNow() - t;
    if (dt > 0.05) { iters = Math.max(1, Math.floor(iters * 0.12 / dt)); break; }
    iters *= 2;
  }
  let best = Infinity;
  for (let r = 0; r < 7; r++) {
    const t = cpuNow();
    f(iters);
    best = Math.min(best, cpuNow() - t);
  }
  return (iters * bytesPerIter) / best / 1e9;
}

for (const key of Object.keys(ex)) {
  const m = /^bench_(.+)_(1m|4k)$/.exec(key);
  if (!m) continue;
  if (filters.length && !filters.some((f) => m[1].includes(f))) continue;
  console.log(`${m[1]}\t${m[2]}\t${measure(ex[key], BYTES[m[2]]).toFixed(3)}`);
}
