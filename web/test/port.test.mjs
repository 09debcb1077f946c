// MessagePortTransport: three parties over MessageChannels, one of them in a worker thread
// (a real realm boundary, as a browser worker is), checked against BigInt plaintext; a closed
// or vanished peer ends the others' operations with TRANSPORT / TIMEOUT instead of a hang.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { MessagePortTransport, Party, RingfenceError, init, insecureTestSeeds, randomSessionId } from 'ringfence';

before(() => init());

const MIN = -(1n << 63n);
const MAX = (1n << 63n) - 1n;
const wrap = (x) => BigInt.asIntN(64, x);

/**
 * Runs in the worker: party 2 of the session, doing what `program` does at the others. (A
 * data: module resolves no bare specifiers, hence the SDK's resolved URL.)
 */
const WORKER = `
import { parentPort, workerData } from 'node:worker_threads';
import { MessagePortTransport, Party, init, insecureTestSeeds } from '${import.meta.resolve('ringfence')}';
await init();
const { ports, sessionId, label } = workerData;
const transport = new MessagePortTransport(ports);
const party = await Party.join({ id: 2, sessionId, seeds: await insecureTestSeeds(label, 2), transport });
const x = await party.input(0, null, workerData.n);
const y = await party.input(1, null, workerData.n);
const z = await party.reveal(await party.mul(x, y));
const c = await party.revealBits(await party.lt(x, y));
transport.close();
parentPort.postMessage({ z, c });
`;

async function program(party, id, xs, ys) {
  const x = await party.input(0, id === 0 ? xs : null, xs.length);
  const y = await party.input(1, id === 1 ? ys : null, ys.length);
  return { z: await party.reveal(await party.mul(x, y)), c: await party.revealBits(await party.lt(x, y)) };
}

test('three parties over message ports, one in a worker thread, agree with plaintext', async (t) => {
  const xs = BigInt64Array.from([0n, 1n, -1n, MIN, MAX, 123456789n, -5n]);
  const ys = BigInt64Array.from([7n, -1n, -1n, -1n, MAX, -987654321n, MIN]);
  const label = 'port-test';
  const sessionId = randomSessionId();
  const ports = MessagePortTransport.channels(3);
  assert.equal(ports[1][1], null);
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(WORKER)}`), {
    workerData: { ports: ports[2], sessionId, label, n: xs.length },
    transferList: [ports[2][0], ports[2][1]],
  });
  const ts = [0, 1].map((id) => new MessagePortTransport(ports[id]));
  t.after(() => (ts.forEach((x) => x.close()), worker.terminate()));
  const fromWorker = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const outs = await Promise.all(
    [0, 1].map(async (id) => {
      const party = await Party.join({ id, sessionId, seeds: await insecureTestSeeds(label, id), transport: ts[id] });
      return program(party, id, xs, ys);
    }),
  );
  outs.push(await fromWorker);
  for (const out of outs) {
    assert.deepEqual([...out.z], [...xs].map((x, i) => wrap(x * ys[i])));
    assert.deepEqual([...out.c], [...xs].map((x, i) => (x < ys[i] ? 1 : 0)));
  }
});

/** Three parties joined over fresh message ports; closed again when the test ends. */
async function portSession(t, label, timeoutMs) {
  const sessionId = randomSessionId();
  const ts = MessagePortTransport.channels(3).map((row) => new MessagePortTransport(row, { timeoutMs }));
  t.after(() => ts.forEach((x) => x.close()));
  const parties = await Promise.all(
    [0, 1, 2].map(async (id) => Party.join({ id, sessionId, seeds: await insecureTestSeeds(label, id), transport: ts[id] })),
  );
  return { ts, parties, xs: parties.map((p) => p.random(100)) };
}

async function rejectsWith(promise, code, peer) {
  const e = await promise.then(() => assert.fail(`expected ${code}`), (e) => e);
  assert.ok(e instanceof RingfenceError, String(e));
  assert.equal(e.code, code, e.message);
  assert.equal(e.peer, peer);
}

test('a peer that closes gives TRANSPORT at once, one that goes silent gives TIMEOUT', async (t) => {
  // In a multiplication P1 waits for P2's frame. P2 closes instead: P1 learns at once.
  const a = await portSession(t, 'port-closed', 10_000);
  const t0 = performance.now();
  a.ts[2].close();
  await rejectsWith(a.parties[1].mul(a.xs[1], a.xs[1]), 'TRANSPORT', 2);
  assert.ok(performance.now() - t0 < 1000, 'long before the timeout');

  // P2 stays silent without closing (as a terminated worker does): P1 times out.
  const b = await portSession(t, 'port-silent', 300);
  await rejectsWith(b.parties[1].mul(b.xs[1], b.xs[1]), 'TIMEOUT', 2);
});

test('frames cross in order and as exact copies; misuse is reported', async (t) => {
  const [[, a], [b]] = MessagePortTransport.channels(2);
  const ta = new MessagePortTransport([null, a]);
  const tb = new MessagePortTransport([b, null]);
  t.after(() => [ta, tb].forEach((x) => x.close())); // open ports would keep the process alive
  const big = new Uint8Array(1000).map((_, i) => i);
  ta.send(1, big.subarray(10, 20)); // a view: only its 10 bytes travel
  ta.send(1, new Uint8Array([42]));
  const first = await tb.recv(0);
  assert.deepEqual(first, big.slice(10, 20));
  assert.equal(first.buffer.byteLength, 10);
  assert.deepEqual(await tb.recv(0), new Uint8Array([42]));
  assert.throws(() => ta.send(0, new Uint8Array(1)), RangeError);
  ta.close();
  await assert.rejects(tb.recv(0), { code: 'CLOSED' });
  assert.throws(() => tb.send(0, new Uint8Array(1)), { code: 'CLOSED' });
  await assert.rejects(ta.recv(1), { code: 'CLOSED' });
});
