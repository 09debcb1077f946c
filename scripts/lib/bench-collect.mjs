// `node scripts/charts.mjs --collect SET…`: runs the benchmarks the charts are drawn from and
// writes their JSON lines to docs/bench/SET.jsonl. Each command's output is preceded by one
// `{"run": {...}}` line that records the command, the date, the source commit, the `ringfence`
// binary used, the machine and its load average before and after the command (the machine may
// be shared, and the load is what makes two runs comparable or not).
//
// Sets:
//   lan   ringfence bench --model M --backend B --repeat R --json, M in nn-a nn-b lenet logreg,
//         B in meteor rep3 (three processes on 127.0.0.1, Noise links)
//   wan   the same for nn-a and lenet with --wan (emulated 70 ms RTT, 320 Mbit/s)
//   wasm  npm run --silent bench -w web -- --ops mul,lt,infer --model lenet --backend meteor
//         (native processes vs wasm parties in Node workers; lines carry `runtime`)

import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, StepError, say, shellQuote } from './common.mjs';

const MODELS_LAN = ['nn-a', 'nn-b', 'lenet', 'logreg'];
const MODELS_WAN = ['nn-a', 'lenet'];
const BACKENDS = ['meteor', 'rep3'];

/** The commands of each set: `[argv0, ...args]`, argv0 `ringfence` or `npm`. */
export function collectCommands(set, repeat) {
  const r = String(repeat);
  switch (set) {
    case 'lan':
      return MODELS_LAN.flatMap((m) => BACKENDS.map((b) => ['ringfence', 'bench', '--model', m, '--backend', b, '--repeat', r, '--json']));
    case 'wan':
      return MODELS_WAN.flatMap((m) => BACKENDS.map((b) => ['ringfence', 'bench', '--model', m, '--backend', b, '--repeat', r, '--json', '--wan']));
    case 'wasm':
      return [['npm', 'run', '--silent', 'bench', '-w', 'web', '--', '--ops', 'mul,lt,infer', '--model', 'lenet', '--backend', 'meteor', '--repeat', r]];
    default:
      throw new StepError(`--collect: unknown set ${set} (lan, wan, wasm)`);
  }
}

const round2 = (x) => Math.round(x * 100) / 100;

function sourceCommit() {
  const r = spawnSync('git', ['describe', '--always', '--dirty'], { cwd: ROOT, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : 'unknown';
}

/**
 * Runs every command of `set` and writes `docs/bench/SET.jsonl`. `bin` is the `ringfence`
 * binary (also handed to `npm run bench -w web` as RINGFENCE_BIN).
 */
export function collect(set, { bin, repeat = 3, outDir = join(ROOT, 'docs', 'bench') }) {
  const lines = [];
  for (const cmd of collectCommands(set, repeat)) {
    const [argv0, ...args] = cmd;
    const exe = argv0 === 'ringfence' ? bin : 'npm';
    const load_before = loadavg().map(round2);
    const t0 = Date.now();
    say(`$ ${shellQuote(cmd)}   (load average ${load_before.join(' ')})`);
    const r = spawnSync(exe, args, {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, RINGFENCE_BIN: bin },
      maxBuffer: 16 << 20,
    });
    if (r.error || r.status !== 0) throw new StepError(`\`${shellQuote(cmd)}\` failed: ${r.error?.message ?? `status ${r.status ?? r.signal}`}`);
    const run = {
      command: shellQuote(cmd),
      date: new Date(t0).toISOString().replace(/\.\d+Z$/, 'Z'),
      wall_seconds: round2((Date.now() - t0) / 1000),
      source: sourceCommit(),
      binary: bin.startsWith(ROOT) ? bin.slice(ROOT.length).replace(/^\/+/, '') : bin,
      cpus: cpus().length,
      cpu: cpus()[0]?.model ?? 'unknown',
      load_before,
      load_after: loadavg().map(round2),
    };
    lines.push(JSON.stringify({ run }));
    for (const l of r.stdout.split('\n').filter((l) => l.trim())) {
      JSON.parse(l); // only JSON lines go into the file
      lines.push(l.trim());
    }
  }
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `${set}.jsonl`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  say(`wrote ${file} (${lines.length} lines)`);
}
