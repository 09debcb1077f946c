// `Party` on every scheme the SDK names: the same calls checked against BigInt plaintext, what
// each scheme refuses (and that a refusal sends nothing), and a deviating mal3 party making
// every party fail with CHECK_FAILED before anything is revealed.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import {
  BACKENDS, InMemoryNetwork, Party, RingfenceError, decodeFixed, encodeFixed, init, insecureTestSeeds, randomSessionId,
} from 'ringfence';
import { all, inputs, rejectsWith, revealAll, session as shared } from './suite.mjs';

before(() => init());

const MIN = -(1n << 63n);
const MAX = (1n << 63n) - 1n;
const EDGES = [0n, 1n, -1n, MIN, MAX];
const wrap = (x) => BigInt.asIntN(64, x);
/** Schemes with comparisons and material made ahead. */
const UNIFORM = ['rep3', 'mal3'];

/**
 * rss runs among five parties here (it is served among 5 or 7), spdz2k among two (neither
 * trusting the other), the others among three.
 */
const SERVERS = { rss: 5, spdz2k: 2 };
const session = (scheme, label) => shared(label, { scheme, servers: SERVERS[scheme] ?? 3 });

function operands() {
  const xs = [];
  const ys = [];
  for (const a of EDGES) for (const b of EDGES) xs.push(a), ys.push(b);
  for (let i = 1; i <= 15; i++) xs.push(wrap(BigInt(i) * 0x9e3779b97f4a7c15n)), ys.push(wrap(BigInt(i) * -0x61c8864680b583ebn));
  return [BigInt64Array.from(xs), BigInt64Array.from(ys)];
}

for (const scheme of BACKENDS) {
  test(`[${scheme}] the same Party calls agree with the plaintext`, async () => {
    const { parties } = await session(scheme, `same-${scheme}`);
    parties.forEach((p) => assert.equal(p.scheme, scheme));
    const [xs, ys] = operands();
    const sh = await inputs(parties, xs, ys);
    const z = await revealAll(parties, await all(parties, (p, i) => p.mul(sh[i][0], sh[i][1])));
    const s = await revealAll(parties, parties.map((p, i) => p.add(sh[i][0], p.neg(sh[i][1]))));
    const [m, k, n] = [2, 3, 2];
    const c = await revealAll(parties, await matmulOf(parties, xs, ys, m, k, n));
    for (let i = 0; i < xs.length; i++) {
      assert.equal(z[i], wrap(xs[i] * ys[i]), `${scheme} mul ${xs[i]}·${ys[i]}`);
      assert.equal(s[i], wrap(xs[i] - ys[i]), `${scheme} add/neg`);
    }
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let acc = 0n;
        for (let t = 0; t < k; t++) acc += xs[i * k + t] * ys[t * n + j];
        assert.equal(c[i * n + j], wrap(acc), `${scheme} matmul [${i}][${j}]`);
      }
    }

    // Fixed point with material made when the product runs (every scheme).
    const f = 13;
    const fx = encodeFixed([1.5, -2.25, 0, 1000.125, -0.5], f);
    const fy = encodeFixed([2, 4, -7.5, -0.25, -0.5], f);
    const fs = await inputs(parties, fx, fy);
    const fz = await revealAll(parties, await all(parties, (p, i) => p.mulFixed(fs[i][0], fs[i][1], f)));
    for (let i = 0; i < fx.length; i++) {
      const exact = (fx[i] * fy[i]) >> BigInt(f);
      assert.ok(fz[i] === exact || fz[i] === exact - 1n, `${scheme} mulFixed ${i}: ${fz[i]} vs ${exact}`);
    }
    const fm = await inputs(parties, encodeFixed([1.5, -2, 0.25, 4], f), encodeFixed([2, -0.5], f));
    const got = decodeFixed(await revealAll(parties, await all(parties, (p, i) => p.matmulFixed(fm[i][0], fm[i][1], 2, 2, 1, f))), f);
    [1.5 * 2 + -2 * -0.5, 0.25 * 2 + 4 * -0.5].forEach((want, i) => assert.ok(Math.abs(got[i] - want) <= 2 ** -12, `${scheme} matmulFixed ${got[i]}`));
  });
}

/** `a` (the first m·k of xs, from P0) times `b` (the first k·n of ys, from P1), revealed. */
async function matmulOf(parties, xs, ys, m, k, n) {
  const sh = await inputs(parties, xs.slice(0, m * k), ys.slice(0, k * n));
  return all(parties, (p, i) => p.matmul(sh[i][0], sh[i][1], m, k, n));
}

for (const scheme of UNIFORM) {
  test(`[${scheme}] comparisons, ReLU with and without a store, material made ahead`, async () => {
    const { parties } = await session(scheme, `cmp-${scheme}`);
    const [xs, ys] = operands();
    const sh = await inputs(parties, xs, ys);
    const bits = await all(parties, async (p, i) => p.revealBits(await p.lt(sh[i][0], sh[i][1])));
    const stores = await all(parties, (p) => p.dabits(xs.length + 3));
    const r1 = await revealAll(parties, await all(parties, (p, i) => p.relu(sh[i][0], stores[i])));
    const r2 = await revealAll(parties, await all(parties, (p, i) => p.relu(sh[i][1])));
    assert.equal(stores[0].length, 3);
    for (let i = 0; i < xs.length; i++) {
      assert.equal(bits[0][i], xs[i] < ys[i] ? 1 : 0, `${scheme} lt ${xs[i]} < ${ys[i]}`);
      assert.equal(r1[i], xs[i] > 0n ? xs[i] : 0n, `${scheme} relu ${xs[i]}`);
      assert.equal(r2[i], ys[i] > 0n ? ys[i] : 0n, `${scheme} relu ${ys[i]}`);
    }
    const f = 13;
    const pairs = await all(parties, (p) => p.truncPairs(6, f));
    const fs = await inputs(parties, encodeFixed([3, -1.25, 0.5, 7], f), encodeFixed([0.5, 2, -4, -1], f));
    const fz = decodeFixed(await revealAll(parties, await all(parties, (p, i) => p.mulFixed(fs[i][0], fs[i][1], pairs[i]))), f);
    [1.5, -2.5, -2, -7].forEach((want, i) => assert.ok(Math.abs(fz[i] - want) <= 2 ** -12, `${scheme} mulFixed ${fz[i]}`));
    assert.equal(pairs[0].length, 2);
    assert.equal(pairs[0].fracBits, f);
    const rand = await revealAll(parties, parties.map((p) => p.random(4)));
    assert.equal(rand.length, 4);
  });
}

test('[meteor] what it lacks is refused with API_MISUSE, nothing is sent, and the party goes on', async () => {
  const { net, parties } = await session('meteor', 'refusals');
  const [p0] = parties;
  const x = await all(parties, (p) => p.input(2, p.id === 2 ? BigInt64Array.from([3n, -4n]) : null, 2));
  const frames = net.stats.frames;
  for (const call of [() => p0.random(2), () => p0.lt(x[0], x[0]), () => p0.dabits(2), () => p0.truncPairs(2, 13)]) {
    const e = await rejectsWith(call, 'API_MISUSE');
    assert.match(e.message, /not available on meteor/);
  }
  await rejectsWith(p0.relu(x[0]), 'API_MISUSE');
  assert.equal(net.stats.frames, frames, 'no frame was sent by a refused call');
  const sq = await revealAll(parties, await all(parties, (p, i) => p.mul(x[i], x[i])));
  assert.deepEqual([...sq], [9n, 16n]);
});

test('[spdz2k] two parties compare and ReLU with material they make as it runs; random sharings, stores of products and serving are refused', async () => {
  const { net, parties } = await session('spdz2k', 'cmp-spdz2k');
  // Few elements: each comparison makes 65 random bits and 124 bit triples by OT here.
  const xs = BigInt64Array.from([0n, -1n, MIN, MAX]);
  const ys = BigInt64Array.from([0n, 1n, MAX, -7n]);
  const sh = await inputs(parties, xs, ys);
  const bits = await all(parties, async (p, i) => p.revealBits(await p.lt(sh[i][0], sh[i][1])));
  assert.deepEqual(bits[0], bits[1]);
  for (let i = 0; i < xs.length; i++) assert.equal(bits[0][i], xs[i] < ys[i] ? 1 : 0, `spdz2k lt ${xs[i]} < ${ys[i]}`);
  const r = await revealAll(parties, await all(parties, (p, i) => p.relu(sh[i][0])));
  assert.deepEqual([...r], [...xs].map((x) => (x > 0n ? x : 0n)));
  const frames = net.stats.frames;
  for (const call of [() => parties[0].random(2), () => parties[0].truncPairs(2, 13)]) {
    const e = await rejectsWith(call, 'API_MISUSE');
    assert.match(e.message, /not available on spdz2k/);
  }
  // Its client computes as a party: a joined session has no client seat to serve.
  const served = await rejectsWith(parties[0].serve({ models: {} }), 'API_MISUSE');
  assert.match(served.message, /no seat for a client/);
  assert.equal(net.stats.frames, frames, 'no frame was sent by a refused call');
  // One party is not a session: spdz2k needs a second to distrust.
  const one = await rejectsWith(
    Party.join({ id: 0, sessionId: randomSessionId(), seeds: await insecureTestSeeds('one', 0, 2), transport: new InMemoryNetwork(2).transport(0), scheme: 'spdz2k', servers: 1 }),
    'INVALID_ARGUMENT',
  );
  assert.match(one.message, /spdz2k runs among 2 or more parties, not 1/);
});

test('an unknown or malformed scheme is INVALID_ARGUMENT before anything is sent', async () => {
  const net = new InMemoryNetwork(3, { timeoutMs: 2000 });
  const seeds = await insecureTestSeeds('bad-scheme', 0);
  for (const scheme of ['rep4', 3, '']) {
    const e = await rejectsWith(Party.join({ id: 0, sessionId: randomSessionId(), seeds, transport: net.transport(0), scheme }), 'INVALID_ARGUMENT');
    assert.match(e.message, /scheme/);
  }
  assert.equal(net.stats.frames, 0);
});

test('[mal3] a party that alters one message makes every party fail with CHECK_FAILED, revealing nothing', async () => {
  const { net, parties } = await session('mal3', 'tamper');
  const [xs, ys] = operands();
  const sh = await inputs(parties, xs, ys);
  // Flip the last payload byte of the first product-sized frame P1 sends P2 from now on.
  let hit = 0;
  net.tamper = (from, to, frame) => {
    if (from !== 1 || to !== 2 || hit || frame.length < 8 * xs.length) return frame;
    hit = frame.length;
    const bad = frame.slice();
    bad[bad.length - 1] ^= 1;
    return bad;
  };
  const outcomes = await Promise.allSettled(parties.map(async (p, i) => p.reveal(await p.mul(sh[i][0], sh[i][1]))));
  assert.ok(hit > 0, 'the hook altered a frame');
  for (const [i, o] of outcomes.entries()) {
    assert.equal(o.status, 'rejected', `P${i} revealed ${o.value}`);
    assert.ok(o.reason instanceof RingfenceError, `P${i}: ${o.reason}`);
    assert.equal(o.reason.code, 'CHECK_FAILED', `P${i}: ${o.reason.message}`);
  }
});
