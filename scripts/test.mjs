#!/usr/bin/env node
// The single test runner: `npm test` (= `node scripts/test.mjs`).
//
//   node scripts/test.mjs           everything
//   node scripts/test.mjs --quick   skip the formatting and clippy checks
//   node scripts/test.mjs --only 'core wasm,npm'   just the named steps (names as listed below)
//
// Steps, in order; the first failure stops the run, names the step, and exits non-zero:
//   1. npm deps    `npm ci` when a package of package-lock.json is missing or at another version
//                  (a fresh clone, a pull that changed the lockfile); runs even with --only
//   2. toolchain   rustfmt + clippy components, wasm32-unknown-unknown and wasm32-wasip1 targets
//                  (installed if missing)
//   3. fmt         cargo fmt --all --check                                         (not with --quick)
//   4. clippy      cargo clippy --workspace --all-targets --all-features -D warnings, the
//                  wasm32-only bindings of ringfence-wasm for wasm32, and cargo doc --workspace
//                  with rustdoc warnings as errors                           (not with --quick)
//   5. cargo test  cargo test --workspace --all-features (in-memory protocol tests); then the
//                  release build of the `ringfence` binary, if a crate defines it (later tests spawn it)
//   6. fuzz smoke  node scripts/fuzz.mjs --smoke: every fuzz target (fuzz/) built instrumented on
//                  stable and run 5 s from its committed corpus; any crash fails
//   7. core wasm   the core's own tests (`cargo test -p ringfence-core`) compiled to wasm32-wasip1
//                  (+simd128) and run by Node's WASI (scripts/lib/wasi-runner.mjs)
//   8. sans-IO     ringfence-wasm built for wasm32 (+simd128, feature selftest) must import nothing
//                  from the host, and runs its rep3 self-test
//   9. web build   npm run build -w web: wasm-bindgen CLI (pinned), SIMD + fallback modules, tsc
//  10. npm         npm test --workspaces --if-present
//  11. charts      node scripts/charts.mjs --check: docs/charts/*.svg are what docs/bench/*.jsonl give
//  12. security    node scripts/check-security-doc.mjs: every test SECURITY.md cites exists
//  13. roster      node scripts/check-roster.mjs: no literal party count (PartyId(3), % 3, (0..3), …)
//                  in the sources outside the 3-party schemes' folders (core-rs/src/rep3, meteor)

import { spawn } from 'node:child_process';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { BINDGEN_IMPORT_MODULES, hostImports, readWasmInterface } from './lib/wasm-imports.mjs';
import {
  ROOT, StepError, bold, capture, cargoMetadata, dim, ensureNpmPackages, findBinary, formatSeconds,
  green, red, run, say, yellow,
} from './lib/common.mjs';

const WASM_TARGET = 'wasm32-unknown-unknown';
const WASI_TARGET = 'wasm32-wasip1';
const WASM_RUSTFLAGS = '-C target-feature=+simd128';
/** The release build of the module: as web/scripts/build-wasm.mjs makes it (one codegen unit). */
const WASM_RELEASE_RUSTFLAGS = `${WASM_RUSTFLAGS} -C codegen-units=1`;

/**
 * Core tests that must not run compiled to wasm32-wasip1, each with the reason (passed to libtest
 * as `--skip NAME`; printed on every run). Empty today: every core test runs there. What is
 * never compiled for wasm is listed in `WASI_NOT_BUILT`.
 */
const WASI_SKIP = new Map([
  // ['module::test_name', 'why it cannot run under WASI'],
]);

/** What the wasm test run leaves out by construction, printed so nobody reads it as coverage. */
const WASI_NOT_BUILT = [
  'doc tests: stable cargo compiles them for the host only (cross-target doctests need nightly -Zdoctest-xcompile); `cargo test` runs them natively',
  'smaller workloads where the tests ask `common::UNDER_WASM`: 4 samples per model (natively all), fewer fault-injection trials, spdz2k comparisons on its own material at k = 32 only; the native run covers the rest with the same code',
  "code under cfg(target_arch = \"x86_64\") (AVX2 kernels, the AVX2 ChaCha path of the PRG): x86 only; wasm runs the portable and simd128 paths instead",
];

const USAGE = `usage: node scripts/test.mjs [--quick] [--only STEP[,STEP…]]

  --quick   skip \`cargo fmt --check\` and \`cargo clippy\`
  --only    run only the named steps (e.g. --only 'core wasm'), for iterating on one of them
  --help    this text`;

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? new Set((args[onlyAt + 1] ?? '').split(',').map((x) => x.trim()).filter(Boolean)) : null;
const unknown = args.filter((a, i) => a !== '--quick' && !(onlyAt >= 0 && (i === onlyAt || i === onlyAt + 1)));
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
  for (const t of [WASM_TARGET, WASI_TARGET]) {
    if (targets.includes(t)) {
      say(`${t} target: installed`);
    } else {
      say(`${t} target: missing, installing it with rustup`);
      run('rustup', ['target', 'add', t]);
    }
  }

  say(dim(capture('rustc', ['--version']).trim() + ' · ' + capture('cargo', ['--version']).trim()));
}

function cargoTests() {
  // Test targets, then doc tests; not the examples, which `cargo test` would otherwise build
  // with codegen (minutes): the clippy step already compiles them (`--all-targets`).
  run('cargo', ['test', '--workspace', '--all-features', '--tests']);
  run('cargo', ['test', '--workspace', '--all-features', '--doc']);

  const bin = findBinary('ringfence', cargoMetadata());
  if (bin) {
    say(bold(`\nBuilding the \`ringfence\` binary (crate ${bin.pkg}) in release mode for the tests that spawn it…`));
    run('cargo', ['build', '--release', '-p', bin.pkg, '--bin', 'ringfence']);
  } else {
    say(yellow('\nNo crate defines a `ringfence` binary yet: skipping its release build.'));
  }
}

/**
 * The core's tests compiled to wasm32-wasip1 with simd128 and run by Node's WASI, one libtest
 * binary at a time (cargo calls the runner). The in-memory harness polls all parties on one
 * thread, so no test needs threads. Prints and checks the totals.
 */
async function coreTestsInWasm() {
  say(
    `The core's own tests, compiled to ${WASI_TARGET} with simd128 and run in Node's WASI: the same\n` +
      'protocol code and PRG/kernel paths the browser runs, checked by the same assertions.',
  );
  for (const line of WASI_NOT_BUILT) say(dim(`  not in this run: ${line}`));
  for (const [name, why] of WASI_SKIP) say(yellow(`  skipped: ${name}: ${why}`));
  if (!WASI_SKIP.size) say(dim('  skipped: none'));

  const runner = join(ROOT, 'scripts', 'lib', 'wasi-runner.mjs');
  // --single-threaded-gc: Node 20 sometimes crashes (SIGSEGV) while exiting after a big test
  // module (nn_rep3) with concurrent GC threads still running; tests pass either way.
  const env = {
    // Node's WASI keeps the module memory's backing store from when the instance started and
    // does not refresh it after `memory.grow`, so a WASI call after a grow may touch freed
    // memory (a SIGSEGV at the test binary's exit, after every test passed: nn_quant, once, in
    // a clean-clone run). A 2 GiB initial memory (reserved, touched lazily) means the test
    // binaries never grow it.
    RUSTFLAGS: `${WASM_RUSTFLAGS} -C link-arg=--initial-memory=2147483648`,
    CARGO_TARGET_WASM32_WASIP1_RUNNER: `${process.execPath} --single-threaded-gc ${runner}`,
  };
  const skips = [...WASI_SKIP.keys()].flatMap((name) => ['--skip', name]);
  const args = ['test', '-p', 'ringfence-core', '--target', WASI_TARGET, '--tests', '--no-fail-fast', '--', ...skips];
  const out = await runTee('cargo', args, env);

  const results = [...out.matchAll(/test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored; \d+ measured; (\d+) filtered out/g)];
  const sum = (i) => results.reduce((a, m) => a + Number(m[i]), 0);
  const [passed, failed, ignored, filtered] = [1, 2, 3, 4].map(sum);
  if (results.length === 0 || passed === 0) throw new StepError('no core test ran under wasm: check the cargo output above');
  if (failed) throw new StepError(`${failed} core test(s) failed under wasm`);
  say(green(`${passed} core tests passed under ${WASI_TARGET} (+simd128) in ${results.length} test binaries`) +
    ` · ${ignored} ignored · ${filtered} skipped (listed above)`);
}

/** Runs a command with inherited stderr, echoing and returning its stdout; throws on failure. */
function runTee(cmd, args, env) {
  say(dim(`$ ${Object.entries(env).map(([k, v]) => `${k}='${v}' `).join('')}${cmd} ${args.join(' ')}`));
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      process.stderr.write(d);
    });
    child.on('error', (e) => reject(new StepError(`${cmd}: ${e.message}`)));
    child.on('close', (code, signal) =>
      code === 0 ? resolve(out) : reject(new StepError(`\`${cmd} ${args.join(' ')}\` ${signal ? `was killed by ${signal}` : `exited with status ${code}`}`)),
    );
  });
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

  // `selftest` adds the raw export called below (and the core's in-memory harness it runs
  // on); the SDK's build (`web build`) leaves it out.
  run('cargo', ['build', '-p', 'ringfence-wasm', '--release', '--features', 'selftest', '--target', WASM_TARGET], {
    env: { RUSTFLAGS: WASM_RELEASE_RUSTFLAGS },
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
  // Later steps need the packages (tsc, Vite, Playwright, workerd), whichever are selected.
  { name: 'npm deps', title: 'npm packages as package-lock.json names them', always: true, fn: ensureNpmPackages },
  { name: 'toolchain', title: 'Toolchain: rustfmt, clippy, wasm32 targets', fn: ensureToolchain },
  { name: 'fmt', title: 'Formatting: cargo fmt --all --check', quickSkip: true, fn: () => run('cargo', ['fmt', '--all', '--check']) },
  {
    name: 'clippy',
    title: 'Lints: cargo clippy and rustdoc (warnings are errors)',
    quickSkip: true,
    fn: () => {
      run('cargo', ['clippy', '--workspace', '--all-targets', '--all-features', '--', '-D', 'warnings']);
      // The JS bindings (wasm/src/bindings) compile only for wasm32: lint them there too.
      run('cargo', ['clippy', '-p', 'ringfence-wasm', '--target', WASM_TARGET, '--', '-D', 'warnings'], {
        env: { RUSTFLAGS: WASM_RUSTFLAGS },
      });
      // Broken or private links in public docs (the API reference users read).
      run('cargo', ['doc', '--workspace', '--no-deps', '--all-features'], { env: { RUSTDOCFLAGS: '-D warnings' } });
    },
  },
  { name: 'cargo test', title: 'Rust tests (in-memory protocol runs) and the native binary', fn: cargoTests },
  {
    name: 'fuzz smoke',
    title: 'Fuzz targets: 5 s each from their committed corpora (scripts/fuzz.mjs --smoke)',
    fn: () => run(process.execPath, ['scripts/fuzz.mjs', '--smoke']),
  },
  { name: 'core wasm', title: `The core's tests compiled to ${WASI_TARGET} (+simd128), run by Node's WASI`, fn: coreTestsInWasm },
  { name: 'sans-IO', title: `Sans-IO proof: ringfence-wasm on ${WASM_TARGET} (+simd128) imports nothing and runs rep3`, fn: sansIoProof },
  { name: 'web build', title: 'Build the npm package ringfence: wasm (SIMD + fallback) and TypeScript', fn: buildWebPackage },
  { name: 'npm', title: 'JavaScript workspaces: npm test --workspaces --if-present', fn: npmWorkspaceTests },
  {
    name: 'charts',
    title: 'Benchmark charts: docs/charts/*.svg are what docs/bench/*.jsonl give',
    fn: () => run(process.execPath, ['scripts/charts.mjs', '--check']),
  },
  {
    name: 'security',
    title: 'SECURITY.md: every test it cites exists',
    fn: () => run(process.execPath, ['scripts/check-security-doc.mjs']),
  },
  {
    name: 'roster',
    title: "Party counts: none written out outside the 3-party schemes' folders (the roster has it)",
    fn: () => run(process.execPath, ['scripts/check-roster.mjs']),
  },
];

if (only) {
  const names = new Set(steps.map((s) => s.name));
  const bad = [...only].filter((n) => !names.has(n));
  if (bad.length || only.size === 0) {
    say(red(`--only: unknown step(s) ${bad.join(', ') || '(none given)'}; steps: ${[...names].join(', ')}`));
    process.exit(2);
  }
}
const results = [];
const started = Date.now();
say(bold(`ringfence test run${quick ? ' (--quick: no fmt, no clippy)' : ''} in ${ROOT}`));

for (const [i, s] of steps.entries()) {
  const n = `${i + 1}/${steps.length}`;
  if (!s.always && ((quick && s.quickSkip) || (only && !only.has(s.name)))) {
    say(`\n${bold(`── [${n}] ${s.title}`)} ${yellow(only ? 'skipped (--only)' : 'skipped (--quick)')}`);
    results.push({ ...s, status: 'skipped', ms: 0 });
    continue;
  }
  say(`\n${bold(`── [${n}] ${s.title}`)}`);
  const t0 = Date.now();
  try {
    await s.fn();
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
