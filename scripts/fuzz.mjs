#!/usr/bin/env node
// Coverage-guided fuzzing of every decoder of outside bytes (fuzz/: one libFuzzer target each).
//
//   node scripts/fuzz.mjs --smoke            build, then each target for a few seconds from its
//                                            committed corpus; fails on any crash (npm test runs this)
//   node scripts/fuzz.mjs --long [--runs N]  each target for N executions (default 10^7), one at
//                                            a time; prints a table of executions, time, exec/s, cov
//   node scripts/fuzz.mjs --seeds            rewrite the seed corpora (fuzz/corpus/) from real files
//                                            and real protocol runs (src/bin/seeds.rs)
//   --target a,b     only these targets          --time S   stop each target after S seconds
//   --list           print the targets
//
// Stable Rust is enough: the targets are built with LLVM's sanitizer-coverage passes turned on
// through RUSTFLAGS (what cargo-fuzz asks of nightly is only the sanitizers, which these runs do
// not use; Rust's own checks, overflow and debug assertions included, find the bugs here). The
// flags apply to the target triple only (`--target`), so build scripts and proc macros are built
// plainly. Runs never write into fuzz/corpus/: new inputs go to a temporary first corpus
// directory, crashes to fuzz/artifacts/<target>/.

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, StepError, bold, capture, dim, formatSeconds, green, main, red, run, say } from './lib/common.mjs';

const FUZZ = join(ROOT, 'fuzz');
const SMOKE_SECONDS = 5;
const LONG_RUNS = 10_000_000;
// Long runs of the record targets cap the input size: their seeds with a frame cut into several
// records are 70 kB, and mutating inputs that large runs over 10x slower. The cap truncates those
// seeds, so frames of several records are reached by the smoke runs (uncapped), not the long ones.
const LONG_MAX_LEN = { link_record: 4096, link_handshake: 4096 };

const RUSTFLAGS = [
  '-Cpasses=sancov-module',
  '-Cllvm-args=-sanitizer-coverage-level=4',
  '-Cllvm-args=-sanitizer-coverage-inline-8bit-counters',
  '-Cllvm-args=-sanitizer-coverage-pc-table',
  '-Cllvm-args=-sanitizer-coverage-trace-compares',
  '--cfg',
  'fuzzing',
].join(' ');

// Every run: a crash input goes to fuzz/artifacts/<target>/; an input taking over 10 s or
// 2 GiB counts as a crash (a hang or a memory bomb from a peer is a bug too).
const COMMON = ['-timeout=10', '-rss_limit_mb=2048', '-print_final_stats=1'];

const USAGE = `usage: node scripts/fuzz.mjs (--smoke | --long [--runs N] | --seeds | --list) [--target a,b] [--time S]`;

function parseArgs(argv) {
  const o = { mode: null, targets: null, runs: LONG_RUNS, time: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new StepError(`${a} needs a value\n${USAGE}`, 2);
      return argv[++i];
    };
    if (['--smoke', '--long', '--seeds', '--list'].includes(a)) o.mode = a.slice(2);
    else if (a === '--target') o.targets = value().split(',').filter(Boolean);
    else if (a === '--runs') o.runs = Number(value());
    else if (a === '--time') o.time = Number(value());
    else if (a === '--help' || a === '-h') {
      say(USAGE);
      process.exit(0);
    } else throw new StepError(`unknown argument ${a}\n${USAGE}`, 2);
  }
  if (!o.mode) throw new StepError(USAGE, 2);
  if (!(o.runs > 0) || (o.time !== null && !(o.time > 0))) throw new StepError('--runs and --time take positive numbers', 2);
  return o;
}

/** The fuzz targets: fuzz/fuzz_targets/*.rs. */
function fuzzTargets() {
  return readdirSync(join(FUZZ, 'fuzz_targets'))
    .filter((f) => f.endsWith('.rs'))
    .map((f) => f.slice(0, -3))
    .sort();
}

function hostTriple() {
  const line = capture('rustc', ['-vV']).split('\n').find((l) => l.startsWith('host: '));
  if (!line) throw new StepError('rustc -vV names no host triple');
  return line.slice(6).trim();
}

/** Builds every target instrumented (release, with debug assertions); returns the binaries' folder. */
function buildTargets() {
  const triple = hostTriple();
  run('cargo', ['build', '--manifest-path', join(FUZZ, 'Cargo.toml'), '--release', '--target', triple, '--bins'], {
    env: { RUSTFLAGS, CARGO_TARGET_DIR: join(FUZZ, 'target') },
  });
  return join(FUZZ, 'target', triple, 'release');
}

/** Runs libFuzzer on `target`; resolves with its exit status and the statistics it printed. */
function fuzzOnce(bin, target, limits) {
  const scratch = mkdtempSync(join(tmpdir(), `fuzz-${target}-`));
  const artifacts = join(FUZZ, 'artifacts', target);
  mkdirSync(artifacts, { recursive: true });
  const args = [scratch, join(FUZZ, 'corpus', target), ...COMMON, `-artifact_prefix=${artifacts}/`, ...limits];
  say(dim(`$ ${join(bin, target)} ${args.join(' ')}`));
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(join(bin, target), args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let tail = '';
    let stats = {};
    child.stderr.on('data', (d) => {
      tail = (tail + d).slice(-20_000);
      for (const line of String(d).split('\n')) {
        const m = line.match(/^#(\d+)\s+(?:DONE|pulse|NEW|REDUCE|INITED).*?cov: (\d+) ft: (\d+)/);
        if (m) stats = { ...stats, execs: Number(m[1]), cov: Number(m[2]), ft: Number(m[3]) };
        const s = line.match(/^stat::number_of_executed_units: (\d+)/);
        if (s) stats.execs = Number(s[1]);
      }
    });
    child.on('error', (e) => reject(new StepError(`${target}: ${e.message}`)));
    child.on('close', (code, signal) => {
      rmSync(scratch, { recursive: true, force: true });
      const seconds = (Date.now() - started) / 1000;
      resolve({ target, code, signal, tail, seconds, ...stats });
    });
  });
}

async function fuzzAll(bin, targets, limits, { quiet, maxLen = {} }) {
  const results = [];
  for (const t of targets) {
    const r = await fuzzOnce(bin, t, [...limits, ...(maxLen[t] ? [`-max_len=${maxLen[t]}`] : [])]);
    const rate = r.execs ? Math.round(r.execs / r.seconds) : 0;
    if (r.code !== 0 || r.signal) {
      if (!quiet) say(r.tail);
      say(r.tail.split('\n').filter((l) => /ERROR|panicked|Test unit written|artifact/.test(l)).join('\n'));
      throw new StepError(
        `fuzz target ${t} failed (${r.signal ?? `status ${r.code}`}) after ${r.execs ?? '?'} executions; ` +
          `the input is in fuzz/artifacts/${t}/ (reproduce: ${join(bin, t)} FILE)`,
      );
    }
    say(`${green('✓')} ${t.padEnd(18)} ${String(r.execs).padStart(10)} runs in ${r.seconds.toFixed(1)} s ` +
      `(${rate} exec/s), cov ${r.cov} ft ${r.ft}`);
    results.push({ ...r, rate });
  }
  return results;
}

main(async () => {
  const o = parseArgs(process.argv.slice(2));
  const all = fuzzTargets();
  const targets = o.targets ?? all;
  const unknown = targets.filter((t) => !all.includes(t));
  if (unknown.length) throw new StepError(`unknown target(s) ${unknown.join(', ')}; targets: ${all.join(', ')}`, 2);
  if (o.mode === 'list') {
    console.log(all.join('\n'));
    return;
  }
  const t0 = Date.now();
  const bin = buildTargets();
  say(dim(`built in ${formatSeconds(Date.now() - t0)}`));
  if (o.mode === 'seeds') {
    run(join(bin, 'seeds'), []);
    return;
  }
  if (o.mode === 'smoke') {
    const limits = [`-max_total_time=${o.time ?? SMOKE_SECONDS}`];
    say(bold(`Smoke: ${targets.length} targets, ${o.time ?? SMOKE_SECONDS} s each, from fuzz/corpus/`));
    await fuzzAll(bin, targets, limits, { quiet: false });
    say(green(`${targets.length} fuzz targets ran without a crash (${formatSeconds(Date.now() - t0)} with the build)`));
    return;
  }
  const limits = [`-runs=${o.runs}`, ...(o.time ? [`-max_total_time=${o.time}`] : [])];
  say(bold(`Long run: ${targets.length} targets, ${o.runs} executions each${o.time ? ` or ${o.time} s` : ''}, one at a time`));
  const results = await fuzzAll(bin, targets, limits, { quiet: false, maxLen: LONG_MAX_LEN });
  say(`\n| target | executions | time | exec/s | cov | ft | crashes |\n|---|---:|---:|---:|---:|---:|---:|`);
  for (const r of results) {
    say(`| ${r.target} | ${r.execs} | ${formatSeconds(r.seconds * 1000)} | ${r.rate} | ${r.cov} | ${r.ft} | 0 |`);
  }
});
