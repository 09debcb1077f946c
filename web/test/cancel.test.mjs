// Cancellation through AbortSignal and progress reports of Party (SIMD module).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { InMemoryNetwork, Party, RingfenceError, init, insecureTestSeeds, randomSessionId } from 'ringfence';

before(() => init());

/** Party `id`'s join options on `net`, with a transport whose close() calls are counted. */
async function options(net, id, extra = {}) {
  const inner = net.transport(id);
  const transport = {
    closed: 0,
    send: (to, frame) => inner.send(to, frame),
    recv: (from) => inner.recv(from),
    close() {
      this.closed += 1;
    },
  };
  return { id, sessionId: extra.sessionId, seeds: await insecureTestSeeds('cancel', id), transport, ...extra };
}

/** Awaits `p`, which must reject with an ABORTED RingfenceError whose cause is `reason`. */
async function assertAborted(p, reason) {
  const err = await p.then(
    () => assert.fail('expected a rejection'),
    (e) => e,
  );
  assert.ok(err instanceof RingfenceError, String(err));
  assert.equal(err.code, 'ABORTED', err.message);
  assert.equal(err.cause, reason);
  assert.match(err.message, /abort/);
  return err;
}

test('an already aborted signal rejects join with ABORTED before anything is sent', async () => {
  const net = new InMemoryNetwork(3);
  const reason = new Error('user went away');
  const opts = await options(net, 0, { sessionId: randomSessionId(), signal: AbortSignal.abort(reason) });
  const events = [];
  await assertAborted(Party.join({ ...opts, onProgress: (e) => events.push(e) }), reason);
  assert.equal(net.stats.frames, 0, 'no frame sent');
  assert.deepEqual(events, [], 'no progress reported');
  assert.equal(opts.transport.closed, 1, 'the transport is closed');
});

test('aborting while waiting on a peer that never answers rejects promptly and closes the transport', async () => {
  const net = new InMemoryNetwork(3); // no timeout: without the abort, this would hang forever
  const sessionId = randomSessionId();
  const controllers = [0, 1, 2].map(() => new AbortController());
  const opts = await Promise.all([0, 1, 2].map((id) => options(net, id, { sessionId, signal: controllers[id].signal })));
  const parties = await Promise.all(opts.map((o) => Party.join(o)));
  const xs = parties.map((p) => p.random(1000));

  // P0 and P1 multiply; P2 never does, so P1 waits for P2's frame forever.
  const pending = [0, 1].map((i) => parties[i].mul(xs[i], xs[i]));
  await new Promise((r) => setTimeout(r, 50));
  const reason = new DOMException('stop', 'AbortError');
  const t0 = performance.now();
  controllers[1].abort(reason);
  await assertAborted(pending[1], reason);
  const ms = performance.now() - t0;
  assert.ok(ms < 100, `rejected after ${ms.toFixed(1)} ms`);
  assert.equal(opts[1].transport.closed, 1, 'the transport is closed once');

  // Poisoned: later calls fail the same way, local ones included, and nothing more is sent.
  const frames = net.stats.frames;
  await assertAborted(parties[1].mul(xs[1], xs[1]), reason);
  assert.throws(() => parties[1].random(3), (e) => e instanceof RingfenceError && e.code === 'ABORTED');
  assert.equal(net.stats.frames, frames);
  controllers[1].abort(new Error('again'));
  assert.equal(opts[1].transport.closed, 1);

  // In a multiplication P0 waits only for P1's frame, which was sent before the abort.
  assert.equal((await pending[0]).length, 1000);
  controllers[0].abort('bye');
  await assertAborted(parties[0].mul(xs[0], xs[0]), 'bye');
});

test('aborting during join rejects it (a peer that never joins)', async () => {
  const net = new InMemoryNetwork(3);
  const ac = new AbortController();
  const opts = await options(net, 0, { sessionId: randomSessionId(), signal: ac.signal });
  const joining = Party.join(opts);
  setTimeout(() => ac.abort('timeout'), 20);
  await assertAborted(joining, 'timeout');
  assert.equal(opts.transport.closed, 1);
});

test('finish() detaches the signal: a later abort no longer closes the transport', async () => {
  const net = new InMemoryNetwork(3);
  const sessionId = randomSessionId();
  const ac = new AbortController();
  const opts = await Promise.all([0, 1, 2].map((id) => options(net, id, { sessionId, signal: ac.signal })));
  const parties = await Promise.all(opts.map((o) => Party.join(o)));
  parties.forEach((p) => p.finish());
  ac.abort();
  assert.deepEqual(opts.map((o) => o.transport.closed), [0, 0, 0]);
});

test('progress: stages in order, byte counts that match the network and the stats', async () => {
  const net = new InMemoryNetwork(3);
  const sessionId = randomSessionId();
  const events = [[], [], []];
  const parties = await Promise.all(
    [0, 1, 2].map(async (id) => Party.join(await options(net, id, { sessionId, onProgress: (e) => events[id].push(e) }))),
  );
  const n = 64;
  const all = (f) => Promise.all(parties.map(f));
  const store = await all((p) => p.dabits(n));
  const x = await all((p) => p.input(0, p.id === 0 ? new BigInt64Array(n).fill(-5n) : null, n));
  const r = await all((p, i) => p.relu(x[i], store[i]));
  const out = await all((p, i) => p.reveal(r[i]));
  assert.deepEqual([...out[2]], new Array(n).fill(0n));
  parties.forEach((p) => p.finish());

  for (const [id, evs] of events.entries()) {
    assert.deepEqual(
      evs.map((e) => `${e.stage}:${e.operation}`),
      ['connecting:join', 'setup:join', 'setup:dabits', 'online:input', 'online:relu', 'online:reveal', 'done:finish'],
      `party ${id}`,
    );
    assert.deepEqual(evs[0], { stage: 'connecting', operation: 'join', bytesSent: 0, bytesReceived: 0, rounds: 0 });
    for (let i = 1; i < evs.length; i++) {
      assert.ok(evs[i].bytesSent >= evs[i - 1].bytesSent && evs[i].bytesReceived >= evs[i - 1].bytesReceived, 'monotone');
      assert.ok(evs[i].rounds >= evs[i - 1].rounds);
    }
    // Revealing n 64-bit values sends at least n·8 bytes of payload.
    const reveal = evs.find((e) => e.operation === 'reveal');
    const relu = evs.find((e) => e.operation === 'relu');
    assert.ok(reveal.bytesSent - relu.bytesSent >= n * 8, 'reveal bytes');
    assert.equal(evs.at(-1).bytesSent, parties[id].stats().bytesSent);
  }
  // Every byte sent is received by someone: the totals agree with the network's counter.
  const last = events.map((e) => e.at(-1));
  const sent = last.reduce((a, e) => a + e.bytesSent, 0);
  assert.equal(sent, net.stats.bytes);
  assert.equal(last.reduce((a, e) => a + e.bytesReceived, 0), sent);
});

test('a join rejected for bad arguments sends nothing and leaves the signal alone', async () => {
  const net = new InMemoryNetwork(3);
  const ac = new AbortController();
  const opts = await options(net, 0, { sessionId: new Uint8Array(15), signal: ac.signal });
  await assert.rejects(Party.join(opts), { name: 'RingfenceError', code: 'LENGTH_MISMATCH' });
  await assert.rejects(Party.join({ ...opts, sessionId: randomSessionId(), signal: {} }), {
    name: 'RingfenceError',
    code: 'INVALID_ARGUMENT',
  });
  ac.abort();
  assert.equal(opts.transport.closed, 0, 'the failed join no longer listens to the signal');
  assert.equal(net.stats.frames, 0);
});
