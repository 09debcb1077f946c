// Runs a `cargo test --target wasm32-wasip1 --no-run` test binary under Node's WASI, so prg.rs's
// unit tests also exercise the simd128 path. Usage: node run-wasi-tests.mjs FILE.wasm
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';

const file = process.argv[2];
const wasi = new WASI({ version: 'preview1', args: [file, '--test-threads=1'], env: {}, returnOnExit: true });
const mod = await WebAssembly.compile(await readFile(file));
const instance = await WebAssembly.instantiate(mod, wasi.getImportObject());
process.exitCode = wasi.start(instance);
