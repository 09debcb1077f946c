// `init({ wasm: { simd: module } })` with a compiled `WebAssembly.Module`, as edge runtimes
// (Cloudflare Workers, workerd) require: there a wasm module is an import of the bundle, and
// compiling wasm from bytes at run time fails ("Wasm code generation disallowed by embedder").
// This process forbids that too once the module is compiled: bytes then fail with a WASM_LOAD
// error saying what to do, the compiled module loads, and three parties run on it.
// The package exports the modules for bundlers (`ringfence/wasm-simd.wasm`, `-nosimd.wasm`).
// tests/edge/workerd.test.mjs runs the SDK in workerd itself.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { InMemoryNetwork, Party, init, insecureTestSeeds, randomSessionId } from 'ringfence';

test('the package exports both wasm modules for bundlers', () => {
  for (const kind of ['simd', 'nosimd']) {
    const resolved = fileURLToPath(import.meta.resolve(`ringfence/wasm-${kind}.wasm`));
    const expected = fileURLToPath(new URL(`../dist/wasm-${kind}/ringfence_wasm_bg.wasm`, import.meta.url));
    assert.equal(resolved, expected);
  }
});

test('init() takes a compiled module and never compiles bytes itself', async () => {
  const bytes = readFileSync(fileURLToPath(import.meta.resolve('ringfence/wasm-simd.wasm')));
  const module = new WebAssembly.Module(bytes);
  // Node's fetch (undici, loaded on first use of a global such as `Response`, which the
  // wasm-bindgen glue checks for) compiles its own wasm parser: load it before forbidding that.
  void globalThis.Response;
  // From here on this realm behaves like a Workers isolate: wasm from bytes is refused.
  const refuse = (name) => () => {
    throw new WebAssembly.CompileError(`WebAssembly.${name}(): Wasm code generation disallowed by embedder`);
  };
  const { Module, compile, instantiate, compileStreaming, instantiateStreaming } = WebAssembly;
  // `instanceof WebAssembly.Module` still holds for the module compiled above.
  WebAssembly.Module = new Proxy(Module, { construct: refuse('Module') });
  WebAssembly.compile = refuse('compile');
  WebAssembly.compileStreaming = refuse('compileStreaming');
  WebAssembly.instantiateStreaming = refuse('instantiateStreaming');
  WebAssembly.instantiate = (source, imports) => {
    if (!(source instanceof WebAssembly.Module)) return refuse('instantiate')();
    return instantiate(source, imports);
  };
  try {
    // Bytes fail there, with what to do instead; a failed init() can be retried.
    const e = await init({ wasm: { simd: bytes } }).catch((x) => x);
    assert.equal(e.code, 'WASM_LOAD', String(e));
    assert.match(e.message, /disallowed by embedder.*import simd from 'ringfence\/wasm-simd\.wasm'; await init\(\{ wasm: \{ simd \} \}\)/);
    assert.deepEqual(await init({ wasm: { simd: module } }), { simdSupported: true, module: 'simd' });
  } finally {
    Object.assign(WebAssembly, { Module, compile, instantiate, compileStreaming, instantiateStreaming });
  }

  const net = new InMemoryNetwork(3);
  const sessionId = randomSessionId();
  const x = [3n, -4n, -(1n << 63n)];
  const y = [5n, 7n, -1n];
  const products = await Promise.all([0, 1, 2].map(async (id) => {
    const p = await Party.join({ id, sessionId, seeds: await insecureTestSeeds('compiled-module', id), transport: net.transport(id) });
    const xs = await p.input(0, id === 0 ? BigInt64Array.from(x) : null, 3);
    const ys = await p.input(1, id === 1 ? BigInt64Array.from(y) : null, 3);
    const out = await p.reveal(await p.mul(xs, ys));
    p.finish();
    return [...out];
  }));
  net.close();
  for (const out of products) assert.deepEqual(out, x.map((a, i) => BigInt.asIntN(64, a * y[i])));
});
