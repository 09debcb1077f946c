// The suite on the SIMD module (what `init()` picks in Node ≥ 20).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { BACKENDS, DEFAULT_FRAC_BITS, init, simdSupported } from 'ringfence';
import { defineSuite } from './suite.mjs';

before(async () => {
  const info = await init({ onWarning: (m) => assert.fail(`unexpected warning: ${m}`) });
  assert.deepEqual(info, { simdSupported: true, module: 'simd' });
});

test('init() detects SIMD in Node and loads the SIMD module', async () => {
  assert.equal(simdSupported(), true);
  const glue = await import('../dist/wasm-simd/ringfence_wasm.js');
  assert.equal(glue.builtWithSimd(), true);
  assert.equal(glue.defaultFracBits(), DEFAULT_FRAC_BITS, "the SDK's default format is the core's");
  assert.deepEqual([...BACKENDS].sort(), glue.backends().sort(), "the SDK's backend names are the core's");
  // Idempotent; asking for the other module in the same realm is misuse.
  assert.equal((await init()).module, 'simd');
  await assert.rejects(init({ forceFallback: true }), { name: 'RingfenceError', code: 'API_MISUSE' });
});

defineSuite('simd');
