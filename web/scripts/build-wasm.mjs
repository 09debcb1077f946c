#!/usr/bin/env node
// Builds the two WebAssembly modules of the SDK: `npm run build:wasm -w web` (or from the root,
// `npm run build:wasm`).
//
//   1. installs the pinned wasm-bindgen CLI when `wasm-bindgen --version` is missing or differs
//      (`cargo install wasm-bindgen-cli --version <pin>`, ≈150 s once; no `--locked`: one of its
//      locked dependencies is missing from the registry, see ../shared/TOOLCHAIN.md);
//   2. builds crate ringfence-wasm for wasm32-unknown-unknown twice, with `+simd128` and without
//      (separate target directories, so the two flag sets never evict each other's cache);
//   3. runs `wasm-bindgen --target web` into dist/wasm-simd/ and dist/wasm-nosimd/
//      (`--target web` + an explicit `init({ module_or_path: bytes })` works in Node ≥ 20,
//      browsers, workers and bundlers);
//   4. runs wasm-opt -O3 (npm package `binaryen`, a root devDependency; never Debian's binaryen,
//      whose modules fail to load) when it is installed, otherwise says so; its output is cached
//      by input hash under <target>/wasm-opt-cache/ (≈15 s per module otherwise);
//   5. prints the module sizes.
//
// The pin is read from wasm/Cargo.toml, so the crate and the CLI cannot drift apart.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const WEB = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = resolve(WEB, '..');
const TARGET = 'wasm32-unknown-unknown';
const CRATE = 'ringfence-wasm';
const ARTIFACT = 'ringfence_wasm';

const say = (m) => process.stderr.write(`${m}\n`);

function run(cmd, args, { env } = {}) {
  say(`$ ${env ? Object.entries(env).map(([k, v]) => `${k}='${v}' `).join('') : ''}${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.error) fail(r.error.code === 'ENOENT' ? `\`${cmd}\` is not installed or not on PATH` : r.error.message);
  if (r.status !== 0) fail(`\`${cmd} ${args.join(' ')}\` exited with status ${r.status ?? r.signal}`);
}

function fail(msg) {
  say(`build-wasm: ${msg}`);
  process.exit(1);
}

function bindgenPin() {
  const toml = readFileSync(join(ROOT, 'wasm', 'Cargo.toml'), 'utf8');
  const m = toml.match(/^wasm-bindgen\s*=\s*"=([0-9.]+)"/m);
  if (!m) fail('wasm/Cargo.toml must pin wasm-bindgen exactly (wasm-bindgen = "=X.Y.Z")');
  return m[1];
}

function installedBindgen() {
  const r = spawnSync('wasm-bindgen', ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return null;
  return r.stdout.trim().split(/\s+/)[1] ?? null;
}

function ensureBindgen(pin) {
  const have = installedBindgen();
  if (have === pin) {
    say(`wasm-bindgen ${pin}: installed`);
    return;
  }
  say(have ? `wasm-bindgen ${have} found, ${pin} needed: installing` : `wasm-bindgen ${pin} missing: installing (≈150 s)`);
  run('cargo', ['install', 'wasm-bindgen-cli', '--version', pin]);
  if (installedBindgen() !== pin) fail(`wasm-bindgen ${pin} is still not on PATH (is ~/.cargo/bin on PATH?)`);
}

function targetDir() {
  const r = spawnSync('cargo', ['metadata', '--no-deps', '--format-version', '1'], {
    cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20,
  });
  if (r.status !== 0) fail('cargo metadata failed');
  return JSON.parse(r.stdout).target_directory;
}

function wasmOpt() {
  const bin = join(ROOT, 'node_modules', '.bin', 'wasm-opt');
  return existsSync(bin) ? bin : null;
}

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;

// ---------------------------------------------------------------------------------------------

const pin = bindgenPin();
ensureBindgen(pin);
const target = targetDir();
const opt = wasmOpt();
// One codegen unit (the release profile has 4): otherwise each unit gets its own copy of the
// generic async state machines it uses, and those copies were 38 % of the module's code
// (function bodies 2.29 MB with 4 units, 1.42 MB with 1; the build takes the same time).
const ONE_UNIT = '-C codegen-units=1';
const variants = [
  // Same RUSTFLAGS and target dir as scripts/test.mjs's sans-IO step: that build is reused.
  { name: 'simd', rustflags: `-C target-feature=+simd128 ${ONE_UNIT}`, dir: target, optFlags: ['--enable-simd'] },
  { name: 'nosimd', rustflags: ONE_UNIT, dir: join(target, 'wasm-nosimd'), optFlags: [] },
];
const sizes = [];
for (const v of variants) {
  say(`\n— ${v.name}`);
  run('cargo', ['build', '-p', CRATE, '--release', '--target', TARGET, '--target-dir', v.dir], {
    env: { RUSTFLAGS: v.rustflags },
  });
  const raw = join(v.dir, TARGET, 'release', `${ARTIFACT}.wasm`);
  const out = join(WEB, 'dist', `wasm-${v.name}`);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  run('wasm-bindgen', ['--target', 'web', '--out-dir', out, '--out-name', ARTIFACT, raw]);
  const mod = join(out, `${ARTIFACT}_bg.wasm`);
  const before = statSync(mod).size;
  if (opt) {
    const flags = ['-O3', '--enable-bulk-memory', '--enable-sign-ext', '--enable-mutable-globals',
      '--enable-nontrapping-float-to-int', '--enable-reference-types', '--enable-multivalue', ...v.optFlags];
    const key = createHash('sha256').update(readFileSync(mod)).update(flags.join(' ')).digest('hex').slice(0, 32);
    const cacheDir = join(target, 'wasm-opt-cache');
    const cached = join(cacheDir, `${key}.wasm`);
    if (existsSync(cached)) {
      say(`wasm-opt: cached (${cached})`);
    } else {
      // The features Rust enables by default on wasm32 (bulk memory, sign-ext, ...) plus SIMD.
      mkdirSync(cacheDir, { recursive: true });
      run(opt, [...flags, mod, '-o', `${cached}.tmp`]);
      copyFileSync(`${cached}.tmp`, cached);
      rmSync(`${cached}.tmp`);
    }
    copyFileSync(cached, mod);
  }
  const bytes = readFileSync(mod);
  sizes.push({ name: v.name, raw: statSync(raw).size, before, after: bytes.length, gz: gzipSync(bytes).length });
}

say('\nModule sizes (wasm-bindgen output' + (opt ? ', then wasm-opt -O3' : '') + '):');
for (const s of sizes) {
  say(`  wasm-${s.name.padEnd(7)} ${kib(s.after)} (${kib(s.gz)} gzipped)` +
    (opt ? `, ${kib(s.before)} before wasm-opt` : '') + `; cargo output with debug info ${kib(s.raw)}`);
}
if (!opt) say('  (wasm-opt not applied: `npm i -D binaryen` at the root to enable it)');
