#!/usr/bin/env node
// Cargo's test runner for wasm32-wasip1 (`CARGO_TARGET_WASM32_WASIP1_RUNNER`): runs a libtest
// binary compiled to WebAssembly under Node's WASI, passing cargo's arguments through.
//
//   node scripts/lib/wasi-runner.mjs FILE.wasm [libtest args…]
//
// WASI preview 1 has no threads, so libtest gets `--test-threads=1` (the in-memory harness polls
// every party's future on one thread anyway). The module sees no files and no environment: the
// core's tests embed their data (`include_bytes!`) and must not touch the host.
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { WASI } from 'node:wasi';

const [file, ...args] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/lib/wasi-runner.mjs FILE.wasm [libtest args…]');
  process.exit(2);
}
// Node prints an ExperimentalWarning for node:wasi; it says nothing the reader needs here.
process.removeAllListeners('warning');
const wasi = new WASI({
  version: 'preview1',
  args: [basename(file), ...args, '--test-threads=1'],
  env: {},
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(file));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
// Exit explicitly: letting Node 20 tear down on its own after a large test module (nn_rep3)
// crashes it with SIGSEGV after every test passed.
process.exit(wasi.start(instance));
