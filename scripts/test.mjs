#!/usr/bin/env node
// The single test runner: `npm test` (= `node scripts/test.mjs`).
//
//   node scripts/test.mjs           everything
//   node scripts/test.mjs --quick   skip the formatting and clippy checks
//
// Steps, in order; the first failure stops the run, names the step, and exits non-zero:
//   1. toolchain   rustfmt + clippy components, wasm32-unknown-unknown target (installed if missing)
//   2. fmt         cargo fmt --all --check                                         (not with --quick)
//   3. clippy      cargo clippy --workspace --all-targets --all-features -D warnings (not with --quick)
//   4. cargo test  cargo test --workspace --all-features (in-memory protocol tests); then the
//                  release build of the `ringfence` binary, if a crate defines it (later tests spawn it)
//   5. sans-IO     ringfence-wasm built for wasm32 (+simd128) must import nothing from the host
//   6. web build   npm run build -w web: wasm-bindgen CLI (pinned), SIMD + fallback modules, tsc
//   7. npm         npm test --workspaces --if-present

import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { BINDGEN_IMPORT_MODULES, hostImports, readWasmInterface } from './lib/wasm-imports.mjs';
import {
  ROOT, StepError, bold, capture, cargoMetadata, dim, findBinary, formatSeconds, green, red, run,
  say, yellow,
} from './lib/common.mjs';

const WASM_TARGET = 'wasm32-unknown-unknown';
const WASM_RUSTFLAGS = '-C target-feature=+simd128';

const USAGE = `usage: node scripts/test.mjs [--quick]

  --quick   skip \`cargo fmt --check\` and \`cargo clippy\`
  --help    this text`;

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}
const unknown = args.filter((a) => a !== '--quick');
if (unknown.length) {
  say(red(`unknown argument(s): ${unknown.join(' ')}`));
  say(USAGE);
  process.exit(2);
}
const quick = args.includes('--quick');

// ---------------------------------------------------------------------------------------------

function ensureToolchain() {
  const components = capture('rustup', ['component', 'list', '--installed']);
  const missing = ['rustfmt', 'clippy'].filter(
    (c) => !components.split('\n').some((l) => l === c || l.startsWith(`${c}-`)),
  );
  if (missing.length) run('rustup', ['component', 'add', ...missing]);
  else say(`rustfmt and clippy: installed`);

  const targets = capture('rustup', ['target', 'list', '--installed']).split('\n').map((l) => l.trim());
  if (!targets.includes(WASM_TARGET)) run('rustup', ['target', 'add', WASM_TARGET]);
  else say(`${WASM_TARGET} target: installed`);

  say(dim(capture('rustc', ['--version']).trim() + ' · ' + capture('cargo', ['--version']).trim()));
}

function cargoTests() {
  run('cargo', ['test', '--workspace', '--all-features']);

  const bin = findBinary('ringfence', cargoMetadata());
  if (bin) {
    say(bold(`\nBuilding the \`ringfence\` binary (crate ${bin.pkg}) in release mode for the tests that spawn it…`));
    run('cargo', ['build', '--release', '-p', bin.pkg, '--bin', 'ringfence']);
  } else {
    say(yellow('\nNo crate defines a `ringfence` binary yet: skipping its release build.'));
  }
}

function sansIoProof() {
  say(
    'The core must compile unchanged to wasm32 and its module must import nothing from the host\n' +
      '(no `env` functions, no WASI): that is what "sans-IO" means in practice.',
  );
  const meta = cargoMetadata();
  const wasmPkg = meta.packages.find((p) => p.name === 'ringfence-wasm');
  if (!wasmPkg) throw new StepError('crate ringfence-wasm is missing from the workspace');
  const lib = wasmPkg.targets.find((t) => t.kind.includes('cdylib'));
  if (!lib) throw new StepError('crate ringfence-wasm is not a cdylib: no .wasm module to inspect');

  run('cargo', ['build', '-p', 'ringfence-wasm', '--release', '--target', WASM_TARGET], {
    env: { RUSTFLAGS: WASM_RUSTFLAGS },
  });

  const file = join(meta.target_directory, WASM_TARGET, 'release', `${lib.name.replace(/-/g, '_')}.wasm`);
  if (!existsSync(file)) throw new StepError(`the build produced no ${file}`);
  const bytes = new Uint8Array(readFileSync(file));
  const { imports, exports } = readWasmInterface(bytes);

  // Second opinion from the engine itself (also proves the module validates, SIMD included).
  let engineImports;
  try {
    engineImports = WebAssembly.Module.imports(new WebAssembly.Module(bytes));
  } catch (e) {
    throw new StepError(`${file} does not compile in Node's WebAssembly engine: ${e.message}`);
  }
  const key = (i) => `${i.module}\0${i.name}\0${i.kind}`;
  if (engineImports.map(key).sort().join('\n') !== imports.map(key).sort().join('\n')) {
    throw new StepError('scripts/lib/wasm-imports.mjs disagrees with WebAssembly.Module.imports() on this module');
  }

  const rel = file.startsWith(ROOT) ? file.slice(ROOT.length + 1) : file;
  say(`${rel}: ${(bytes.length / 1024).toFixed(1)} KiB, ${imports.length} import(s), ${exports.length} export(s)`);
  for (const i of imports) say(dim(`  import ${i.kind} ${i.module}.${i.name}`));
  const bad = hostImports(imports);
  if (bad.length) {
    throw new StepError(
      `the wasm module imports from the host, so the core is not sans-IO:\n` +
        bad.map((i) => `  ${i.kind} ${i.module}.${i.name}`).join('\n') +
        `\n(allowed: only wasm-bindgen placeholders ${[...BINDGEN_IMPORT_MODULES].join(', ')})`,
    );
  }
  say(green('no host imports'));

  // Run the core inside the module: three rep3 parties on the in-memory network, checked
  // against plaintext (the export returns 1 on success). The raw module (before the
  // wasm-bindgen CLI) imports wasm-bindgen's placeholders; the self-test calls none of them,
  // so each is a stub that fails loudly if it ever is.
  const stubs = {};
  for (const i of imports) {
    if (i.kind !== 'function') throw new StepError(`unexpected ${i.kind} import ${i.module}.${i.name}`);
    stubs[i.module] ??= {};
    stubs[i.module][i.name] = () => {
      throw new Error(`ringfence_selftest called the host import ${i.module}.${i.name}`);
    };
  }
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), stubs);
  const selftest = instance.exports.ringfence_selftest;
  if (typeof selftest !== 'function') throw new StepError('ringfence-wasm does not export ringfence_selftest');
  const code = selftest();
  if (code !== 1) {
    throw new StepError(`ringfence_selftest() returned ${code} in wasm (1 = ok, 0 = wrong result, 2 = protocol error)`);
  }
  say(green('rep3 self-test (mul, lt, relu among three parties) passed inside the wasm module'));
}

function buildWebPackage() {
  say(
    'The npm package `ringfence` (web/): the wasm-bindgen CLI (pinned; installed when missing),\n' +
      'ringfence-wasm built with and without SIMD, wasm-bindgen glue, then the TypeScript sources.',
  );
  run('npm', ['run', 'build', '-w', 'web']);
}

function npmWorkspaceTests() {
  run('npm', ['test', '--workspaces', '--if-present']);
}

// ---------------------------------------------------------------------------------------------

const steps = [
  { name: 'toolchain', title: 'Toolchain: rustfmt, clippy, wasm32 target', fn: ensureToolchain },
  { name: 'fmt', title: 'Formatting: cargo fmt --all --check', quickSkip: true, fn: () => run('cargo', ['fmt', '--all', '--check']) },
  {
    name: 'clippy',
    title: 'Lints: cargo clippy (warnings are errors)',
    quickSkip: true,
    fn: () => run('cargo', ['clippy', '--workspace', '--all-targets', '--all-features', '--', '-D', 'warnings']),
  },
  { name: 'cargo test', title: 'Rust tests (in-memory protocol runs) and the native binary', fn: cargoTests },
  { name: 'sans-IO', title: `Sans-IO proof: ringfence-wasm on ${WASM_TARGET} (+simd128) imports nothing and runs rep3`, fn: sansIoProof },
  { name: 'web build', title: 'Build the npm package ringfence: wasm (SIMD + fallback) and TypeScript', fn: buildWebPackage },
  { name: 'npm', title: 'JavaScript workspaces: npm test --workspaces --if-present', fn: npmWorkspaceTests },
];

const results = [];
const started = Date.now();
say(bold(`ringfence test run${quick ? ' (--quick: no fmt, no clippy)' : ''} in ${ROOT}`));

for (const [i, s] of steps.entries()) {
  const n = `${i + 1}/${steps.length}`;
  if (quick && s.quickSkip) {
    say(`\n${bold(`── [${n}] ${s.title}`)} ${yellow('skipped (--quick)')}`);
    results.push({ ...s, status: 'skipped', ms: 0 });
    continue;
  }
  say(`\n${bold(`── [${n}] ${s.title}`)}`);
  const t0 = Date.now();
  try {
    s.fn();
  } catch (e) {
    const ms = Date.now() - t0;
    if (!(e instanceof StepError)) throw e;
    say(`\n${red(bold(`✗ step ${n} "${s.name}" failed after ${formatSeconds(ms)}:`))}\n${red(e.message)}`);
    process.exit(e.exitCode || 1);
  }
  const ms = Date.now() - t0;
  results.push({ ...s, status: 'ok', ms });
  say(green(`✓ ${s.name} (${formatSeconds(ms)})`));
}

say(`\n${bold('Summary')}`);
for (const r of results) {
  say(`  ${r.status === 'ok' ? green('✓') : yellow('-')} ${r.name.padEnd(12)} ${r.status === 'ok' ? formatSeconds(r.ms) : r.status}`);
}
say(green(bold(`All steps passed in ${formatSeconds(Date.now() - started)}.`)));
