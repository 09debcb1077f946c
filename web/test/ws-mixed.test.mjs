// A mixed session through the native relay: P0 is a wasm party in this Node process, P1 and P2
// are native `ringfence party` processes. They run the same check program (mul, lt, matmul)
// on agreed inputs; all three must reveal identical results, equal to BigInt plaintext. The
// core's PRG streams are the same code on both targets: any divergence would break the
// results.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Party, WebSocketTransport, insecureTestSeeds, randomSessionId } from 'ringfence';
import { checkPlaintext, checkProgram, hex, runParty, relayForTests } from './ws-relay.mjs';

const relay = relayForTests();

test('one wasm party and two native parties agree with each other and with plaintext', async () => {
  const d = 4;
  const edges = [0n, 1n, -1n, -(1n << 63n), (1n << 63n) - 1n];
  const inputs = [0, 1, 2].map((i) => Array.from({ length: d * d }, (_, k) => edges[(k + i) % 5] * BigInt(k % 3 === 0 ? 1 : k + i + 1)));
  for (const v of inputs) for (let k = 0; k < v.length; k++) v[k] = BigInt.asIntN(64, v[k]);
  const label = `mixed-${Date.now()}`;
  const sessionId = randomSessionId();
  const native = [1, 2].map((id) =>
    runParty([
      '--relay', relay.url, '--session', hex(sessionId), '--id', String(id), '--matmul-dim', String(d),
      `--values=${inputs[id].join(',')}`, '--danger-insecure-test-seeds', label, '--timeout-ms', '20000',
    ]),
  );
  const wasm = (async () => {
    const transport = await WebSocketTransport.connect({
      url: relay.url, sessionId, id: 0, security: 'danger-insecure-test-seeds', timeoutMs: 20_000,
    });
    const party = await Party.join({ id: 0, sessionId, seeds: await insecureTestSeeds(label, 0), transport });
    const out = await checkProgram(party, 0, inputs, d);
    transport.close();
    return out;
  })();
  const settled = await Promise.allSettled([wasm, ...native]);
  const failed = settled.filter((r) => r.status === 'rejected').map((r, i) => `#${i}: ${r.reason?.stack ?? r.reason}`);
  assert.equal(failed.length, 0, `${failed.join('\n')}\nrelay log:\n${relay.log.join('\n')}`);
  const [w, n1, n2] = settled.map((r) => r.value);
  assert.deepEqual(n1, w, 'native P1 and wasm P0 agree');
  assert.deepEqual(n2, w, 'native P2 and wasm P0 agree');
  assert.deepEqual(w, checkPlaintext(inputs, d));
});
