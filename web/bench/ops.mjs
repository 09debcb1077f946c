#!/usr/bin/env node
// Quick benchmark of three wasm parties in one Node process over the in-memory transport:
// 10^6 multiplications and 10^6 comparisons, best of a few runs, for the SIMD and the fallback
// module (each in its own process: one module per realm). Prints one JSON line per measurement.
//
//   node bench/ops.mjs [--n 1000000] [--reps 5]        (after `npm run build -w web`)
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { InMemoryNetwork, Party, init, insecureTestSeeds, randomSessionId } from 'ringfence';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const n = arg('n', 1_000_000);
const reps = arg('reps', 5);
const child = process.argv.includes('--child');

if (!child) {
  for (const variant of ['simd', 'nosimd']) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', variant, '--n', String(n), '--reps', String(reps)], { stdio: 'inherit' });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
  process.exit(0);
}

const variant = process.argv.includes('nosimd') ? 'nosimd' : 'simd';
await init({ forceFallback: variant === 'nosimd' });
const net = new InMemoryNetwork(3);
const sessionId = randomSessionId();
const parties = await Promise.all([0, 1, 2].map(async (id) =>
  Party.join({ id, sessionId, seeds: await insecureTestSeeds('bench', id), transport: net.transport(id) })));
const all = (f) => Promise.all(parties.map((p, i) => f(p, i)));

async function measure(op, prepare, run) {
  let best = Infinity;
  for (let r = 0; r < reps; r++) {
    const ctx = await prepare();
    const t0 = performance.now();
    await run(ctx);
    best = Math.min(best, performance.now() - t0);
  }
  const line = { op, n, runtime: `wasm-node${variant === 'nosimd' ? '-nosimd' : ''}`, ms: +best.toFixed(1), per_s: Math.round(n / (best / 1000)) };
  console.log(JSON.stringify(line));
}

const operands = () => parties.map((p) => [p.random(n), p.random(n)]);
await measure('mul', async () => operands(), (xs) => all((p, i) => p.mul(xs[i][0], xs[i][1])));
await measure('lt', async () => operands(), (xs) => all((p, i) => p.lt(xs[i][0], xs[i][1])));
