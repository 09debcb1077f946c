// The same suite on the fallback module (no `simd128`), as loaded where SIMD is missing; here
// loaded from explicit bytes, as an app that ships the `.wasm` elsewhere would.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, test } from 'node:test';
import { init } from 'ringfence';
import { defineSuite } from './suite.mjs';

const NOSIMD = new URL('../dist/wasm-nosimd/ringfence_wasm_bg.wasm', import.meta.url);

before(async () => {
  const info = await init({ forceFallback: true, wasm: { nosimd: readFileSync(NOSIMD) } });
  assert.deepEqual(info, { simdSupported: true, module: 'nosimd' });
});

test('the fallback module is the one built without SIMD', async () => {
  const glue = await import('../dist/wasm-nosimd/ringfence_wasm.js');
  assert.equal(glue.builtWithSimd(), false);
  assert.equal((await init({ forceFallback: true })).module, 'nosimd');
});

defineSuite('nosimd');
