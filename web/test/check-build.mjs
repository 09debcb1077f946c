// Fails with a clear message when the package is not built (or older than its sources):
// the tests import the built package (`dist/`), as its users do.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const HOW = 'run `npm run build -w web` (or `node scripts/test.mjs`, which builds it first)';

function newest(dir, ext) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) t = Math.max(t, newest(p, ext));
    else if (p.endsWith(ext)) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

const outputs = [
  ['dist/index.js', 'src', '.ts'],
  ['dist/wasm-simd/ringfence_wasm_bg.wasm', '../wasm/src', '.rs'],
  ['dist/wasm-nosimd/ringfence_wasm_bg.wasm', '../wasm/src', '.rs'],
];
for (const [out, srcDir, ext] of outputs) {
  const file = join(WEB, out);
  if (!existsSync(file)) {
    console.error(`web tests: web/${out} is missing: ${HOW}.`);
    process.exit(1);
  }
  if (statSync(file).mtimeMs < newest(join(WEB, srcDir), ext)) {
    console.error(`web tests: web/${out} is older than ${srcDir.replace('..', '')}/: ${HOW}.`);
    process.exit(1);
  }
}
