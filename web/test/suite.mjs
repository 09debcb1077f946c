// The SDK test suite, run once per wasm module (simd.test.mjs, nosimd.test.mjs): three wasm
// parties in one Node process over the in-memory transport, checked against BigInt plaintext.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  InMemoryNetwork, Party, RingfenceError, decodeFixed, encodeFixed, insecureTestSeeds, randomSessionId,
} from 'ringfence';

const MIN = -(1n << 63n);
const MAX = (1n << 63n) - 1n;
const EDGES = [0n, 1n, -1n, MIN, MAX];
const wrap = (x) => BigInt.asIntN(64, x);

/** A seeded xorshift64* generator of signed 64-bit BigInts. */
function rng(seed) {
  let s = BigInt.asUintN(64, BigInt(seed) * 0x9e3779b97f4a7c15n + 1n);
  return () => {
    s ^= s >> 12n;
    s = BigInt.asUintN(64, s ^ (s << 25n));
    s ^= s >> 27n;
    return BigInt.asIntN(64, s * 0x2545f4914f6cdd1dn);
  };
}

/** Random values plus every pair of edge values: returns [xs, ys]. */
function operands(n, seed) {
  const r = rng(seed);
  const xs = [];
  const ys = [];
  for (const a of EDGES) for (const b of EDGES) xs.push(a), ys.push(b);
  for (let i = 0; i < n; i++) xs.push(r()), ys.push(r());
  return [BigInt64Array.from(xs), BigInt64Array.from(ys)];
}

/** Three parties (or `servers`: five or seven for rss) joined to one session over an in-memory network. */
export async function session(label, { timeoutMs = 20_000, onProgress, scheme, servers = 3 } = {}) {
  const net = new InMemoryNetwork(servers, { timeoutMs });
  const sessionId = randomSessionId();
  const ids = Array.from({ length: servers }, (_, id) => id);
  const parties = await Promise.all(
    ids.map(async (id) =>
      Party.join({ id, sessionId, seeds: await insecureTestSeeds(label, id, servers), transport: net.transport(id), onProgress, scheme, servers }),
    ),
  );
  return { net, parties };
}

/** Runs `f(party, id)` at all three parties concurrently. */
export const all = (parties, f) => Promise.all(parties.map((p, i) => f(p, i)));

/** P0 inputs `xs`, P1 inputs `ys`; returns each party's [x, y] shares. */
export async function inputs(parties, xs, ys) {
  return all(parties, async (p, id) => {
    const x = await p.input(0, id === 0 ? xs : null, xs.length);
    const y = await p.input(1, id === 1 ? ys : null, ys.length);
    return [x, y];
  });
}

/** Reveals at all parties and checks they agree; returns the values. */
export async function revealAll(parties, shares) {
  const outs = await all(parties, (p, i) => p.reveal(shares[i]));
  for (const o of outs.slice(1)) assert.deepEqual(o, outs[0]);
  return outs[0];
}

export async function rejectsWith(promiseOrFn, code) {
  let err;
  try {
    await (typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn);
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof RingfenceError, `expected a RingfenceError ${code}, got ${err}`);
  assert.equal(err.code, code, err.message);
  assert.equal(typeof err.message, 'string');
  return err;
}

export function defineSuite(module) {
  test(`[${module}] mul, add, sub, neg, random on random and edge values`, async () => {
    const { parties } = await session(`mul-${module}`);
    const [xs, ys] = operands(200, 1);
    const sh = await inputs(parties, xs, ys);
    const prods = await all(parties, (p, i) => p.mul(sh[i][0], sh[i][1]));
    const sums = parties.map((p, i) => p.add(sh[i][0], sh[i][1]));
    const diffs = parties.map((p, i) => p.sub(sh[i][0], sh[i][1]));
    const negs = parties.map((p, i) => p.neg(sh[i][0]));
    const rand = parties.map((p) => p.random(50));
    const z = await revealAll(parties, prods);
    const s = await revealAll(parties, sums);
    const d = await revealAll(parties, diffs);
    const ng = await revealAll(parties, negs);
    await revealAll(parties, rand);
    for (let i = 0; i < xs.length; i++) {
      assert.equal(z[i], wrap(xs[i] * ys[i]), `mul ${xs[i]}·${ys[i]}`);
      assert.equal(s[i], wrap(xs[i] + ys[i]));
      assert.equal(d[i], wrap(xs[i] - ys[i]));
      assert.equal(ng[i], wrap(-xs[i]));
    }
  });

  test(`[${module}] lt and relu (signed, exact on the whole ring)`, async () => {
    const { parties } = await session(`cmp-${module}`);
    const [xs, ys] = operands(300, 2);
    const sh = await inputs(parties, xs, ys);
    const stores = await all(parties, (p) => p.dabits(xs.length + 10));
    const c = await all(parties, (p, i) => p.lt(sh[i][0], sh[i][1]));
    const r = await all(parties, (p, i) => p.relu(sh[i][0], stores[i]));
    assert.equal(stores[0].length, 10);
    const bits = await all(parties, (p, i) => p.revealBits(c[i]));
    assert.deepEqual(bits[1], bits[0]);
    const relu = await revealAll(parties, r);
    for (let i = 0; i < xs.length; i++) {
      assert.equal(bits[0][i], xs[i] < ys[i] ? 1 : 0, `lt ${xs[i]} < ${ys[i]}`);
      assert.equal(relu[i], xs[i] > 0n ? xs[i] : 0n, `relu ${xs[i]}`);
    }
  });

  test(`[${module}] matmul`, async () => {
    const { parties } = await session(`matmul-${module}`);
    const [m, k, n] = [5, 7, 5];
    const [a] = operands(m * k - 25, 3);
    const [, b] = operands(k * n - 25, 4);
    const sh = await inputs(parties, a, b);
    const c = await revealAll(parties, await all(parties, (p, i) => p.matmul(sh[i][0], sh[i][1], m, k, n)));
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let acc = 0n;
        for (let t = 0; t < k; t++) acc += a[i * k + t] * b[t * n + j];
        assert.equal(c[i * n + j], wrap(acc), `c[${i}][${j}]`);
      }
    }
  });

  test(`[${module}] fixed-point mul and matmul with truncation pairs`, async () => {
    const f = 16;
    const { parties } = await session(`fixed-${module}`);
    const r = rng(5);
    const reals = (n) => [0, 1, -1, 2 ** -16, -(2 ** -16), 1000.5, -999.25, ...Array.from({ length: n }, () => Number(r() % 2_000_000n) / 1000)];
    const xs = encodeFixed(reals(100), f);
    const ys = encodeFixed(reals(100).reverse(), f);
    const sh = await inputs(parties, xs, ys);
    const pairs = await all(parties, (p) => p.truncPairs(xs.length + 4, f));
    assert.equal(pairs[0].fracBits, f);
    const z = await revealAll(parties, await all(parties, (p, i) => p.mulFixed(sh[i][0], sh[i][1], pairs[i])));
    for (let i = 0; i < xs.length; i++) {
      const exact = (xs[i] * ys[i]) >> BigInt(f); // floor
      assert.ok(z[i] === exact || z[i] === exact - 1n, `mulFixed ${xs[i]}·${ys[i]}: ${z[i]} vs ${exact}`);
    }
    const dz = decodeFixed(z, f);
    const dx = decodeFixed(xs, f);
    const dy = decodeFixed(ys, f);
    for (let i = 0; i < xs.length; i++) assert.ok(Math.abs(dz[i] - dx[i] * dy[i]) <= 2 ** -15, `decoded ${i}`);

    // 2×2 by 2×1 fixed-point matrix product, 2 pairs left in each store.
    const a = encodeFixed([1.5, -2, 0.25, 4], f);
    const b = encodeFixed([2, -0.5], f);
    const sm = await inputs(parties, a, b);
    const c = await revealAll(parties, await all(parties, (p, i) => p.matmulFixed(sm[i][0], sm[i][1], 2, 2, 1, pairs[i])));
    assert.equal(pairs[0].length, 2);
    const want = [1.5 * 2 + -2 * -0.5, 0.25 * 2 + 4 * -0.5];
    const got = decodeFixed(c, f);
    for (let i = 0; i < 2; i++) assert.ok(Math.abs(got[i] - want[i]) <= 2 ** -15, `matmulFixed ${got[i]} vs ${want[i]}`);
  });

  test(`[${module}] bad arguments fail with precise codes before any frame is sent`, async () => {
    const { net, parties } = await session(`bad-${module}`);
    const [p0, p1] = parties;
    const three = parties.map((p) => p.random(3));
    const four = parties.map((p) => p.random(4));
    const stores = await all(parties, (p) => p.dabits(2));
    const frames = net.stats.frames;

    await rejectsWith(p0.mul(three[0], four[0]), 'LENGTH_MISMATCH');
    await rejectsWith(p0.lt(three[0], four[0]), 'LENGTH_MISMATCH');
    await rejectsWith(p0.matmul(three[0], four[0], 2, 2, 2), 'LENGTH_MISMATCH');
    await rejectsWith(p0.input(0, new BigInt64Array(2), 3), 'LENGTH_MISMATCH');
    await rejectsWith(p0.input(0, [1n, 2n, 3n], 3), 'INVALID_ARGUMENT');
    await rejectsWith(p0.input(0, new Float64Array(3), 3), 'INVALID_ARGUMENT');
    await rejectsWith(p0.input(0, new BigInt64Array(3), 1.5), 'INVALID_ARGUMENT');
    await rejectsWith(p0.input(3, null, 3), 'INVALID_ARGUMENT');
    await rejectsWith(p1.input(0, new BigInt64Array(3), 3), 'API_MISUSE');
    await rejectsWith(p0.input(0, null, 3), 'API_MISUSE');
    await rejectsWith(p0.mul(three[0], 'x'), 'INVALID_ARGUMENT');
    await rejectsWith(p0.mul(three[1], three[1]), 'API_MISUSE'); // P1's shares passed to P0
    await rejectsWith(p0.relu(four[0], stores[0]), 'PREPROCESSING_EXHAUSTED');
    await rejectsWith(p0.relu(four[0], {}), 'INVALID_ARGUMENT');
    await rejectsWith(p0.truncPairs(3, 0), 'INVALID_ARGUMENT');
    await rejectsWith(() => p0.random(-1), 'INVALID_ARGUMENT');
    await rejectsWith(() => p0.add(three[0], four[0]), 'LENGTH_MISMATCH');
    await rejectsWith(() => encodeFixed([1, Number.NaN]), 'OUT_OF_RANGE');
    await rejectsWith(() => encodeFixed([2 ** 50]), 'OUT_OF_RANGE');
    await rejectsWith(() => encodeFixed(['1']), 'INVALID_ARGUMENT');
    assert.equal(stores[0].length, 2, 'a failed relu consumes no daBits');
    const badSeeds = { prev: new Uint8Array(31), next: new Uint8Array(32), own: new Uint8Array(32) };
    const t = net.transport(0);
    await rejectsWith(Party.join({ id: 0, sessionId: randomSessionId(), seeds: badSeeds, transport: t }), 'LENGTH_MISMATCH');
    await rejectsWith(Party.join({ id: 3, sessionId: randomSessionId(), seeds: badSeeds, transport: t }), 'INVALID_ARGUMENT');
    await rejectsWith(Party.join({ id: 0, sessionId: new Uint8Array(16), seeds: badSeeds, transport: {} }), 'INVALID_ARGUMENT');
    assert.equal(net.stats.frames, frames, 'no frame was sent by a rejected call');

    // Revealing consumes; a second reveal is misuse. A second operation while one runs is too.
    const opened = await all(parties, (p, i) => p.reveal(three[i]));
    assert.deepEqual(opened[0], opened[1]);
    await rejectsWith(p0.reveal(three[0]), 'API_MISUSE');
    const pending = p0.mul(four[0], four[0]);
    await rejectsWith(p0.mul(four[0], four[0]), 'API_MISUSE');
    await Promise.all([pending, parties[1].mul(four[1], four[1]), parties[2].mul(four[2], four[2])]);
    const err = await rejectsWith(p0.mul(three[0], three[0]), 'API_MISUSE');
    assert.ok(err.cause instanceof Error, 'the cause is kept');
  });

  test(`[${module}] free() consumes shares and bits at once`, async () => {
    const { parties } = await session(`free-${module}`);
    const x = parties.map((p) => p.random(5));
    const y = parties.map((p) => p.random(5));
    const c = await all(parties, (p, i) => p.lt(x[i], y[i]));
    const z = await all(parties, (p, i) => p.mul(x[i], y[i]));
    x[0].free();
    x[0].free(); // idempotent
    assert.equal(x[0].length, 0);
    await rejectsWith(parties[0].mul(x[0], y[0]), 'API_MISUSE');
    await rejectsWith(parties[0].reveal(x[0]), 'API_MISUSE');
    c[0].free();
    assert.equal(c[0].length, 0);
    await rejectsWith(parties[0].revealBits(c[0]), 'API_MISUSE');
    // The result of an operation on freed-later operands is unaffected.
    y.forEach((v) => v.free());
    assert.equal((await revealAll(parties, z)).length, 5);
  });

  test(`[${module}] a transport's allocFrame and releaseFrame recycle every frame buffer`, async () => {
    const net = new InMemoryNetwork(3, { timeoutMs: 20_000 });
    const sessionId = randomSessionId();
    const pool = [];
    const counts = { alloc: 0, reused: 0, release: 0 };
    const recycling = (id) => ({
      ...net.transport(id),
      allocFrame(_to, length) {
        counts.alloc++;
        const i = pool.findIndex((b) => b.length === length);
        if (i < 0) return new Uint8Array(length);
        counts.reused++;
        return pool.splice(i, 1)[0].fill(0xee); // stale bytes must all be overwritten
      },
      releaseFrame(_from, frame) {
        counts.release++;
        pool.push(frame);
      },
    });
    const parties = await Promise.all(
      [0, 1, 2].map(async (id) =>
        Party.join({ id, sessionId, seeds: await insecureTestSeeds(`recycle-${module}`, id), transport: recycling(id) }),
      ),
    );
    const [xs, ys] = operands(100, 3);
    const sh = await inputs(parties, xs, ys);
    const z = await revealAll(parties, await all(parties, (p, i) => p.mul(sh[i][0], sh[i][1])));
    const c = await all(parties, (p, i) => p.lt(sh[i][0], sh[i][1]));
    const bits = await all(parties, (p, i) => p.revealBits(c[i]));
    for (let i = 0; i < xs.length; i++) {
      assert.equal(z[i], wrap(xs[i] * ys[i]));
      assert.equal(bits[0][i], xs[i] < ys[i] ? 1 : 0);
    }
    assert.equal(counts.alloc, net.stats.frames, 'every frame was written into an allocFrame buffer');
    assert.equal(counts.release, net.stats.frames, 'every received frame was released');
    assert.ok(counts.reused > 0);

    // A buffer of the wrong length is the transport's failure, not a corrupt frame.
    const bad = new InMemoryNetwork(3, { timeoutMs: 2000 });
    const t = { ...bad.transport(0), allocFrame: (_to, length) => new Uint8Array(length + 1) };
    await rejectsWith(Party.join({ id: 0, sessionId, seeds: await insecureTestSeeds('short', 0), transport: t }), 'TRANSPORT');
  });

  test(`[${module}] a peer sending garbage gives PEER_MISBEHAVED naming it`, async () => {
    const { net, parties } = await session(`garbage-${module}`);
    const xs = parties.map((p) => p.random(10));
    net.tamper = (from, _to, frame) => (from === 2 ? crypto.getRandomValues(new Uint8Array(frame.length)) : frame);
    const res = await Promise.allSettled(parties.map((p, i) => p.mul(xs[i], xs[i])));
    // In a multiplication P2 sends only to P1.
    assert.equal(res[1].status, 'rejected');
    assert.ok(res[1].reason instanceof RingfenceError);
    assert.equal(res[1].reason.code, 'PEER_MISBEHAVED', res[1].reason.message);
    assert.equal(res[1].reason.peer, 2);
    // Poisoned: later calls fail with the same error.
    await rejectsWith(parties[1].mul(xs[1], xs[1]), 'PEER_MISBEHAVED');

    // A fake P2 that sends garbage instead of joining.
    const net2 = new InMemoryNetwork(3, { timeoutMs: 5000 });
    const sessionId = randomSessionId();
    const joins = [0, 1].map(async (id) =>
      Party.join({ id, sessionId, seeds: await insecureTestSeeds('g2', id), transport: net2.transport(id) }),
    );
    const fake = net2.transport(2);
    fake.send(0, new Uint8Array(60).fill(7));
    fake.send(1, new Uint8Array(3));
    for (const j of await Promise.allSettled(joins)) {
      const e = await rejectsWith(Promise.reject(j.reason), 'PEER_MISBEHAVED');
      assert.equal(e.peer, 2);
    }
  });

  test(`[${module}] a peer that disappears gives TIMEOUT, not a hang`, async () => {
    const net = new InMemoryNetwork(3, { timeoutMs: 200 });
    const sessionId = randomSessionId();
    const t0 = Date.now();
    const joins = [0, 1].map(async (id) =>
      Party.join({ id, sessionId, seeds: await insecureTestSeeds('gone', id), transport: net.transport(id) }),
    );
    const settled = await Promise.allSettled(joins);
    for (const j of settled) assert.equal((await rejectsWith(Promise.reject(j.reason), 'TIMEOUT')).peer, 2);
    assert.ok(Date.now() - t0 < 5000);
  });

  test(`[${module}] progress reports named stages and byte counts`, async () => {
    const events = [];
    const { parties } = await session(`progress-${module}`, { onProgress: (e) => events.push(e) });
    const x = parties.map((p) => p.random(8));
    await all(parties, (p) => p.dabits(8));
    await all(parties, (p, i) => p.mul(x[i], x[i]));
    parties.forEach((p) => p.finish());
    const stages = new Set(events.map((e) => e.stage));
    assert.deepEqual([...stages].sort(), ['connecting', 'done', 'online', 'setup']);
    const last = events.filter((e) => e.operation === 'mul').at(-1);
    assert.ok(last.bytesSent > 0 && last.rounds >= 3);
    assert.equal(parties[0].stats().bytesSent, events.filter((e) => e.operation === 'finish')[0].bytesSent);
  });
}
