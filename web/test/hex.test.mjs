// toHex / fromHex: what deployments print and serve (session ids, public keys) to bytes and back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RingfenceError, fromHex, toHex } from 'ringfence';

test('toHex and fromHex round-trip any bytes; fromHex takes either case', () => {
  for (const n of [0, 1, 16, 32, 1000]) {
    const bytes = crypto.getRandomValues(new Uint8Array(n));
    const hex = toHex(bytes);
    assert.match(hex, new RegExp(`^[0-9a-f]{${2 * n}}$`));
    assert.deepEqual(fromHex(hex), bytes);
    assert.deepEqual(fromHex(hex.toUpperCase(), n), bytes);
  }
  assert.equal(toHex(Uint8Array.of(0, 1, 0xab, 0xff)), '0001abff');
  assert.equal(toHex(Buffer.from([0x10, 0x20])), '1020', 'a Buffer is a Uint8Array');
});

test('fromHex and toHex refuse what is not hex or bytes with INVALID_ARGUMENT', () => {
  const fails = (f, message) => assert.throws(f, (e) => e instanceof RingfenceError && e.code === 'INVALID_ARGUMENT' && message.test(e.message));
  fails(() => fromHex('abc'), /expected an even number of hex digits, got "abc"/);
  fails(() => fromHex('0x12'), /expected an even number of hex digits, got "0x12"/);
  fails(() => fromHex('zz'), /got "zz"/);
  fails(() => fromHex(42), /got number/);
  fails(() => fromHex('ab'.repeat(15), 16), /expected 32 hex digits \(16 bytes\), got 30/);
  fails(() => toHex([1, 2]), /expected a Uint8Array, got an array/);
  fails(() => toHex('00'), /expected a Uint8Array, got string/);
});
