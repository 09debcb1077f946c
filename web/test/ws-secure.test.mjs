// SecureRelayTransport: end-to-end Noise between wasm parties (and native ones) through the
// native relay. The handshake and records are the native code compiled to wasm, so seeds and
// bytes agree across targets; a tap in front of the relay checks it sees only ciphertext.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  Party, RingfenceError, SecureRelayTransport, WebSocketTransport, generateNoiseKeypair, init, randomSessionId,
} from 'ringfence';
import { checkPlaintext, checkProgram, hex, runParty, startRelay, tap } from './ws-relay.mjs';

let relay;
const MARKER = Buffer.from('RINGFENCE-KNOWN-PLAINTEXT-7f3a');

before(async () => {
  await init();
  relay = await startRelay();
});
after(() => relay?.stop());

const keypairs = () => [0, 1, 2].map(() => generateNoiseKeypair());
const secure = (url, sessionId, id, kps, extra = {}) =>
  SecureRelayTransport.connect({
    url, sessionId, id, keypair: kps[id], publicKeys: kps.map((k) => k.publicKey), timeoutMs: 20_000, ...extra,
  });

/** A ~100 KB frame full of the marker (several records and relay messages). */
function secretFrame(from, to) {
  const f = new Uint8Array(100_000);
  for (let i = 2; i + MARKER.length <= f.length; i += MARKER.length) f.set(MARKER, i);
  f[0] = from;
  f[1] = to;
  return f;
}

/** Every party sends its secret frame to every other; checks what arrives. */
async function exchange(ts) {
  ts.forEach((t, i) => [0, 1, 2].filter((j) => j !== i).forEach((j) => t.send(j, secretFrame(i, j))));
  await Promise.all(
    ts.map(async (t, i) => {
      for (const j of [0, 1, 2].filter((j) => j !== i)) assert.deepEqual(await t.recv(j), secretFrame(j, i));
    }),
  );
  ts.forEach((t) => t.close());
}

test('the relay sees only ciphertext on secure links, and the plaintext on insecure ones', async () => {
  const kps = keypairs();
  const t = await tap(relay.url);
  const sessionId = randomSessionId();
  const ts = await Promise.all([0, 1, 2].map((id) => secure(t.url, sessionId, id, kps)));
  for (const [i, j] of [[0, 1], [0, 2], [1, 2]]) assert.deepEqual(ts[i].seedWith(j), ts[j].seedWith(i), `seed ${i}-${j}`);
  assert.notDeepEqual(ts[0].seedWith(1), ts[0].seedWith(2));
  // WebAssembly ends (no AES instructions) agree on ChaCha20-Poly1305 records.
  for (const [i, j] of [[0, 1], [0, 2], [1, 2]]) assert.equal(ts[i].cipherWith(j), 'chacha20-poly1305', `cipher ${i}-${j}`);
  await exchange(ts);
  assert.ok(t.seen().length > 600_000, `the tap saw the traffic (${t.seen().length} bytes)`);
  assert.equal(t.seen().indexOf(MARKER), -1, 'plaintext crossed the relay');
  await t.stop();

  // Control: the same traffic on the insecure transport is visible to the relay.
  const c = await tap(relay.url);
  const plainId = randomSessionId();
  const ps = await Promise.all(
    [0, 1, 2].map((id) => WebSocketTransport.connect({ url: c.url, sessionId: plainId, id, security: 'danger-insecure-test-seeds' })),
  );
  await exchange(ps);
  assert.notEqual(c.seen().indexOf(MARKER), -1);
  await c.stop();
});

test('three wasm parties compute over secure relay links', async () => {
  const kps = keypairs();
  const sessionId = randomSessionId();
  const d = 2;
  const inputs = [[3n, -5n, -(1n << 63n), 7n], [4n, -9n, 1n, 7n], [2n, 0n, -1n, 10n]];
  const outs = await Promise.all(
    [0, 1, 2].map(async (id) => {
      const transport = await secure(relay.url, sessionId, id, kps);
      const party = await Party.join({ id, sessionId, seeds: transport.seeds, transport });
      const out = await checkProgram(party, id, inputs, d);
      transport.close();
      return out;
    }),
  );
  assert.deepEqual(outs[1], outs[0]);
  assert.deepEqual(outs[2], outs[0]);
  assert.deepEqual(outs[0], checkPlaintext(inputs, d));
});

test('a party holding the wrong key is refused', async () => {
  const kps = keypairs();
  const impostor = [kps[0], kps[1], generateNoiseKeypair()];
  const sessionId = randomSessionId();
  const results = await Promise.allSettled([
    secure(relay.url, sessionId, 0, kps, { timeoutMs: 2_000 }),
    secure(relay.url, sessionId, 1, kps, { timeoutMs: 2_000 }),
    secure(relay.url, sessionId, 2, impostor, { timeoutMs: 2_000 }),
  ]);
  for (const r of results) if (r.status === 'fulfilled') r.value.close();
  const errors = results.filter((r) => r.status === 'rejected').map((r) => r.reason);
  assert.ok(errors.length >= 2, 'P0 and P1 refuse the impostor (and it fails too)');
  for (const e of errors) assert.ok(e instanceof RingfenceError, String(e));
  assert.ok(errors.some((e) => /rejected|does not hold/.test(e.message)), errors.map((e) => e.message).join('\n'));
  await assert.rejects(secure(relay.url, sessionId, 0, kps, { publicKeys: [] }), { code: 'INVALID_ARGUMENT' });
});

test('mixed secure session: one wasm party and two native parties, Noise end to end', async () => {
  const kps = keypairs();
  const toHex = (b) => Buffer.from(b).toString('hex');
  const publicKeys = kps.map((k) => toHex(k.publicKey));
  const d = 3;
  const inputs = [
    [5n, -(1n << 63n), 0n, 1n, -1n, (1n << 63n) - 1n, 42n, -42n, 9n],
    [6n, 1n, 0n, 1n, 2n, -1n, 42n, -43n, -9n],
    [1n, 2n, 3n, -4n, -5n, -6n, 7n, 8n, (1n << 62n)],
  ];
  const sessionId = randomSessionId();
  const native = [1, 2].map((id) =>
    runParty(
      ['--relay', relay.url, '--session', hex(sessionId), '--id', String(id), '--matmul-dim', String(d),
        `--values=${inputs[id].join(',')}`, '--timeout-ms', '20000'],
      { stdin: `${JSON.stringify({ private_key: toHex(kps[id].privateKey), public_keys: publicKeys })}\n` },
    ),
  );
  const wasm = (async () => {
    const transport = await secure(relay.url, sessionId, 0, kps);
    const party = await Party.join({ id: 0, sessionId, seeds: transport.seeds, transport });
    const out = await checkProgram(party, 0, inputs, d);
    transport.close();
    return out;
  })();
  const settled = await Promise.allSettled([wasm, ...native]);
  const failed = settled.filter((r) => r.status === 'rejected').map((r) => r.reason?.stack ?? String(r.reason));
  assert.equal(failed.length, 0, failed.join('\n'));
  const [w, n1, n2] = settled.map((r) => r.value);
  assert.deepEqual(n1, w, 'native P1 and wasm P0 agree');
  assert.deepEqual(n2, w, 'native P2 and wasm P0 agree');
  assert.deepEqual(w, checkPlaintext(inputs, d));
});
