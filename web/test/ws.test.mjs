// WebSocketTransport through the native relay (`ringfence relay` on 127.0.0.1): three wasm
// parties in this process compute together, checked against BigInt plaintext; link endings
// and refusals are CLOSED errors, never hangs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Party, RingfenceError, WebSocketTransport, insecureTestSeeds, randomSessionId } from 'ringfence';
import { checkPlaintext, checkProgram, relayForTests } from './ws-relay.mjs';

const SECURITY = 'danger-insecure-test-seeds';
const relay = relayForTests();

const connect = (sessionId, id, extra = {}) =>
  WebSocketTransport.connect({ url: relay.url, sessionId, id, security: SECURITY, timeoutMs: 5_000, ...extra });

test('three wasm parties compute mul, lt and matmul through the relay', async () => {
  const d = 3;
  const inputs = [
    [3n, -5n, -(1n << 63n), 7n, 0n, 1n, -1n, (1n << 63n) - 1n, 12n],
    [4n, -9n, 1n, 7n, 0n, -1n, 5n, 2n, -12n],
    [2n, 0n, -1n, 10n, 3n, 3n, -7n, 1n, 1n],
  ];
  const sessionId = randomSessionId();
  const results = await Promise.all(
    [0, 1, 2].map(async (id) => {
      const transport = await connect(sessionId, id);
      const party = await Party.join({ id, sessionId, seeds: await insecureTestSeeds('ws-test', id), transport });
      const out = await checkProgram(party, id, inputs, d);
      transport.close();
      return out;
    }),
  );
  assert.deepEqual(results[1], results[0]);
  assert.deepEqual(results[2], results[0]);
  assert.deepEqual(results[0], checkPlaintext(inputs, d));
  // The relay logs joins and departures, never payloads.
  assert.ok(relay.log.some((l) => /P2 connected/.test(l)), relay.log.join('\n'));
});

test('a party that leaves ends its links with CLOSED; a silent one times out', async () => {
  const sessionId = randomSessionId();
  const [t0, t1, t2] = await Promise.all([0, 1, 2].map((id) => connect(sessionId, id, { timeoutMs: 300 })));
  t2.send(0, new Uint8Array([1, 2, 3]));
  t2.close();
  assert.deepEqual(await t0.recv(2), new Uint8Array([1, 2, 3]), 'frames sent before leaving arrive');
  await assert.rejects(t0.recv(2), { code: 'CLOSED' });
  await assert.rejects(t1.recv(2), { code: 'CLOSED' });
  await assert.rejects(t1.recv(0), { code: 'TIMEOUT', timeoutMs: 300 });
  assert.throws(() => t2.send(0, new Uint8Array(1)), { code: 'CLOSED' });
  t0.close();
  t1.close();
});

test('the insecure mode must be named, and refusals are clear errors', async () => {
  const sessionId = randomSessionId();
  await assert.rejects(WebSocketTransport.connect({ url: relay.url, sessionId, id: 0 }), (e) => {
    assert.ok(e instanceof RingfenceError && e.code === 'INVALID_ARGUMENT', String(e));
    assert.match(e.message, /danger-insecure-test-seeds/);
    return true;
  });
  const t0 = await connect(sessionId, 0);
  await assert.rejects(connect(sessionId, 0), (e) => e.code === 'CLOSED' && /409/.test(e.message));
  assert.throws(() => t0.send(0, new Uint8Array(30)), RangeError, 'no link to itself');
  assert.throws(() => t0.send(1, new Uint8Array((16 << 20) + 1)), /message limit/);
  t0.close();
});
