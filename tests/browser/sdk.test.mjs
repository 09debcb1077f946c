// Three parties in one page over the SDK's in-memory transport, once on the SIMD module and
// once on the forced non-SIMD fallback (a page loads one module per realm, so one page each):
// mul, lt, relu, matmul and fixed-point mul on random and edge values, checked against BigInt
// plaintext computed here.
import assert from 'node:assert/strict';
import { pageTest, setupBrowser } from './harness.mjs';

setupBrowser();

const MIN = -(1n << 63n);
const MAX = (1n << 63n) - 1n;
const EDGES = [0n, 1n, -1n, MIN, MAX];
const wrap = (x) => BigInt.asIntN(64, x);

/** A seeded xorshift64* generator of signed 64-bit BigInts (the web suite's). */
function rng(seed) {
  let s = BigInt.asUintN(64, BigInt(seed) * 0x9e3779b97f4a7c15n + 1n);
  return () => {
    s ^= s >> 12n;
    s = BigInt.asUintN(64, s ^ (s << 25n));
    s ^= s >> 27n;
    return BigInt.asIntN(64, s * 0x2545f4914f6cdd1dn);
  };
}

function operands() {
  const r = rng(7);
  const xs = [];
  const ys = [];
  for (const a of EDGES) for (const b of EDGES) xs.push(a), ys.push(b);
  for (let i = 0; i < 200; i++) xs.push(r()), ys.push(r());
  const [m, k, n] = [5, 7, 5];
  const a = [...EDGES, ...Array.from({ length: m * k - 5 }, r)];
  const b = [...EDGES.toReversed(), ...Array.from({ length: k * n - 5 }, r)];
  const fracBits = 16;
  const reals = [0, 1, -1, 2 ** -16, -(2 ** -16), 1000.5, -999.25, ...Array.from({ length: 50 }, () => Number(r() % 2_000_000n) / 1000)];
  const fixed = (v) => v.map((x) => BigInt(Math.round(x * 2 ** fracBits)));
  return { xs, ys, a, b, dims: [m, k, n], fx: fixed(reals), fy: fixed(reals.toReversed()), fracBits };
}

function plaintext({ xs, ys, a, b, dims: [m, k, n] }) {
  const matmul = [];
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let acc = 0n;
      for (let t = 0; t < k; t++) acc += a[i * k + t] * b[t * n + j];
      matmul.push(wrap(acc));
    }
  }
  return {
    mul: xs.map((x, i) => wrap(x * ys[i])),
    lt: xs.map((x, i) => (x < ys[i] ? 1 : 0)),
    relu: xs.map((x) => (x > 0n ? x : 0n)),
    matmul,
  };
}

for (const module of ['simd', 'nosimd']) {
  pageTest(`in-page parties on the ${module} module agree with plaintext`, async (page) => {
    const info = await page.evaluate((fallback) => window.rf.init(fallback), module === 'nosimd');
    assert.deepEqual(info, { simdSupported: true, module });

    const ops = operands();
    const outs = await page.evaluate((args) => window.rf.suite(args), ops);
    const want = plaintext(ops);
    assert.equal(outs.length, 3);
    for (const [id, out] of outs.entries()) {
      for (const op of ['mul', 'lt', 'relu', 'matmul']) assert.deepEqual(out[op], want[op], `P${id} ${op}`);
      assert.deepEqual(out.mulFixed, outs[0].mulFixed, `P${id} mulFixed agrees with P0`);
    }
    // Probabilistic truncation: ⌊x·y / 2^f⌋ or one less.
    outs[0].mulFixed.forEach((z, i) => {
      const exact = (ops.fx[i] * ops.fy[i]) >> BigInt(ops.fracBits);
      assert.ok(z === exact || z === exact - 1n, `mulFixed ${ops.fx[i]}·${ops.fy[i]}: ${z} vs ${exact}`);
    });
  });
}
