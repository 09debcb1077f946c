#!/usr/bin/env node
// Benchmark charts: reads the benchmark results in docs/bench/*.jsonl (JSON lines of
// `ringfence bench --json` and of `npm run bench -w web`, whose lines carry `runtime`, each
// command's lines preceded by a `{"run": {...}}` line recording the command, date, commit and
// load average) and writes SVG charts to docs/charts/. The SVGs depend only on the JSONL, so
// regenerating them from the same files gives the same bytes.
//
//   node scripts/charts.mjs                    docs/bench/*.jsonl -> docs/charts/*.svg
//   node scripts/charts.mjs --check            fail if docs/charts/ differs from what the JSONL gives
//   node scripts/charts.mjs --collect SET[,SET] [--repeat N]
//                                              run the benchmarks and rewrite docs/bench/SET.jsonl
//                                              (lan, wan, wasm; see scripts/lib/bench-collect.mjs)
//
// --collect uses $RINGFENCE_BIN or target/release/ringfence, and for `wasm` the built SDK
// (npm run build -w web). Charts:
//   inference-lan.svg   online and setup time per model and backend (METEOR, rep3), loopback
//   inference-wan.svg   the same on the emulated WAN, with each run's latency floor
//   bytes.svg           bytes sent per party per model and backend, online and setup
//   wasm-vs-native.svg  the same operations by native processes and by wasm parties in Node

import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { collect } from './lib/bench-collect.mjs';
import { ROOT, StepError, findBinary, main, say } from './lib/common.mjs';
import { barChart, formatBytes, formatSeconds, sig3 } from './lib/svg-chart.mjs';

const BENCH = join(ROOT, 'docs', 'bench');
const CHARTS = join(ROOT, 'docs', 'charts');

const MODELS = [
  ['nn-a', 'NN-A'],
  ['nn-b', 'NN-B'],
  ['nn-c', 'NN-C'],
  ['lenet', 'LeNet'],
  ['logreg', 'logreg'],
];
const METEOR = '#1f6fb4';
const REP3 = '#d9772b';
const BACKEND_SERIES = [
  { key: 'meteor online', label: 'METEOR online', color: METEOR },
  { key: 'meteor setup', label: 'METEOR setup', color: METEOR, pattern: 'light' },
  { key: 'rep3 online', label: 'rep3 online', color: REP3 },
  { key: 'rep3 setup', label: 'rep3 setup', color: REP3, pattern: 'light' },
];

/** Every result line of docs/bench/*.jsonl, each with `_run` (its command's run line) and `_file`. */
function readResults() {
  if (!existsSync(BENCH)) return [];
  const out = [];
  for (const file of readdirSync(BENCH).filter((f) => f.endsWith('.jsonl')).sort()) {
    let run = null;
    for (const [i, line] of readFileSync(join(BENCH, file), 'utf8').split('\n').entries()) {
      if (!line.trim()) continue;
      let o;
      try {
        o = JSON.parse(line);
      } catch (e) {
        throw new StepError(`docs/bench/${file}:${i + 1}: not JSON (${e.message})`);
      }
      if (o.run) run = o.run;
      else out.push({ ...o, _run: run, _file: file });
    }
  }
  return out;
}

/** Provenance lines for a chart drawn from `records`. */
function footnotes(records, extra = []) {
  const runs = [...new Set(records.map((r) => r._run).filter(Boolean))];
  const files = [...new Set(records.map((r) => `docs/bench/${r._file}`))].join(', ');
  if (!runs.length) return [`data: ${files} (no run line: command and load unknown)`, ...extra];
  const loads = runs.flatMap((r) => [r.load_before[0], r.load_after[0]]);
  const dates = [...new Set(runs.map((r) => r.date.slice(0, 10)))].join(', ');
  const sources = [...new Set(runs.map((r) => r.source))].join(', ');
  const cpus = [...new Set(runs.map((r) => `${r.cpus} vCPU ${r.cpu}`))].join('; ');
  return [
    ...extra,
    `data: ${files} · ${runs.length} command${runs.length === 1 ? '' : 's'}, ${dates}, source ${sources}`,
    `machine: ${cpus}, 1-min load average ${sig3(Math.min(...loads))}–${sig3(Math.max(...loads))} during the runs (shared with other jobs: times are pessimistic)`,
  ];
}

/** The `ringfence bench --model` results (no `runtime` field) on `network` ('loopback' or 'wan …'). */
function inferRuns(results, wan) {
  return results.filter((r) => r.op === 'infer' && !r.runtime && (wan ? r.network?.startsWith('wan') : r.network === 'loopback'));
}

/** Groups per model present in `runs`: the last result per (model, backend) wins. */
function byModel(runs, bars) {
  const last = new Map(runs.map((r) => [`${r.model} ${r.backend}`, r]));
  return MODELS.filter(([m]) => runs.some((r) => r.model === m)).map(([m, label]) => ({
    label,
    model: m,
    bars: bars((b) => last.get(`${m} ${b}`)),
  }));
}

function timeBars(get) {
  return ['meteor', 'rep3'].flatMap((b) => {
    const r = get(b);
    return [
      { series: `${b} online`, value: r?.online_seconds ?? null, note: r ? `(${r.rounds} rounds)` : undefined },
      { series: `${b} setup`, value: r?.setup_seconds ?? null },
    ];
  });
}

function inferenceChart(results, wan) {
  const runs = inferRuns(results, wan);
  if (!runs.length) return null;
  const groups = byModel(runs, timeBars);
  const network = wan ? runs[0].network.replace(/^wan /, 'emulated WAN, ').replace('rtt', 'RTT') : 'loopback (127.0.0.1)';
  const markers = wan
    ? groups.flatMap((g) => ['meteor', 'rep3'].map((b) => {
        const r = runs.findLast((x) => x.model === g.model && x.backend === b);
        return r?.latency_floor_seconds ? { group: g.label, series: `${b} online`, value: r.latency_floor_seconds, label: `latency floor ${formatSeconds(r.latency_floor_seconds)}` } : null;
      }).filter(Boolean))
    : [];
  return barChart({
    title: `Secure inference time, batch 1, ${wan ? 'emulated WAN' : 'LAN'}`,
    subtitle: `Three party processes, ${network}, Noise links, Z_2^64; mean of ${runs[0].repeat} timed runs; setup is made before and timed apart.`,
    series: BACKEND_SERIES,
    groups,
    axis: { label: `time (seconds${wan ? '' : ', log scale'})`, log: !wan, format: formatSeconds },
    markers,
    footnotes: footnotes(runs, wan ? ['black tick: the latency floor, online rounds × one-way delay (35 ms)'] : []),
  });
}

function bytesChart(results) {
  const runs = inferRuns(results, false);
  if (!runs.length) return null;
  const bars = (get) =>
    ['meteor', 'rep3'].flatMap((b) => [
      { series: `${b} online`, value: get(b)?.online_bytes_per_party ?? null },
      { series: `${b} setup`, value: get(b)?.setup_bytes_per_party ?? null },
    ]);
  return barChart({
    title: 'Bytes sent per party, secure inference, batch 1',
    subtitle: 'Frame bytes (payload + 28-byte headers) each party sends, on average over the three, in the LAN runs (the emulated WAN changes times, not bytes).',
    series: BACKEND_SERIES,
    groups: byModel(runs, bars),
    axis: { label: 'bytes per party (log scale)', log: true, format: formatBytes },
    footnotes: footnotes(runs),
  });
}

function wasmChart(results) {
  const runs = results.filter((r) => r.runtime && r.seconds !== undefined);
  if (!runs.length) return null;
  const RUNTIMES = [
    { key: 'native', label: 'native (3 processes)', color: '#3a3a3a' },
    { key: 'wasm-node', label: 'wasm SIMD (3 Node workers)', color: '#2a9d6f' },
    { key: 'wasm-node-nosimd', label: 'wasm without SIMD', color: '#2a9d6f', pattern: 'light' },
  ];
  const last = new Map(runs.map((r) => [`${r.runtime} ${r.op}`, r]));
  const ratio = (rt, op, field) => {
    const w = last.get(`${rt} ${op}`);
    const n = last.get(`native ${op}`);
    return w && n && rt !== 'native' ? `(×${sig3(w[field] / n[field])})` : undefined;
  };
  const ops = [
    ['mul', 'seconds', (r) => `mul, ${sig3(r.n / 1e6)}M`],
    ['lt', 'seconds', (r) => `lt, ${sig3(r.n / 1e6)}M`],
    ['infer', 'online_seconds', (r) => `${r.model === 'lenet' ? 'LeNet' : r.model} online`],
    ['infer', 'setup_seconds', (r) => `${r.model === 'lenet' ? 'LeNet' : r.model} setup`],
  ];
  const groups = ops
    .filter(([op]) => last.has(`native ${op}`))
    .map(([op, field, label]) => ({
      label: label(last.get(`native ${op}`)),
      bars: RUNTIMES.map((rt) => ({ series: rt.key, value: last.get(`${rt.key} ${op}`)?.[field] ?? null, note: ratio(rt.key, op, field) })),
    }));
  const infer = last.get('native infer');
  return barChart({
    title: 'WebAssembly in Node vs native, three parties on one machine',
    subtitle: `Z_2^64 rep3 mul and exact comparison (lt) over 10^6 values${infer ? `; ${infer.model === 'lenet' ? 'LeNet' : infer.model} with ${infer.backend === 'meteor' ? 'METEOR' : 'rep3'} (Party.serve)` : ''}; (×r) = time / native time.`,
    series: RUNTIMES,
    groups,
    axis: { label: 'time (seconds, log scale)', log: true, format: formatSeconds },
    footnotes: footnotes(runs, [
      'mul, lt: native over plaintext TCP, wasm over MessageChannels (neither encrypts). Inference: Noise links through a local relay for both; '
        + 'the wasm parties (Party.serve) also share the weights in their setup and serve a fourth participant, the client (native: weights shared once, untimed; P1 is the client).',
    ]),
  });
}

/** The charts the JSONL gives: `{ name: svg }`. */
function render() {
  const results = readResults();
  const charts = {
    'inference-lan.svg': inferenceChart(results, false),
    'inference-wan.svg': inferenceChart(results, true),
    'bytes.svg': bytesChart(results),
    'wasm-vs-native.svg': wasmChart(results),
  };
  for (const [name, svg] of Object.entries(charts)) {
    if (svg === null) {
      say(`${name}: no data in docs/bench/ for it: skipped`);
      delete charts[name];
    }
  }
  return charts;
}

main(() => {
  const args = process.argv.slice(2);
  const at = args.indexOf('--collect');
  if (at >= 0) {
    const bin = process.env.RINGFENCE_BIN ?? findBinary('ringfence')?.binPath;
    if (!bin || !existsSync(bin)) throw new StepError('no ringfence binary: build it (npm run demo) or set RINGFENCE_BIN');
    const r = args.indexOf('--repeat');
    for (const set of (args[at + 1] ?? '').split(',')) collect(set, { bin, repeat: r >= 0 ? Number(args[r + 1]) : 3 });
  }
  const charts = render();
  if (args.includes('--check')) {
    const stale = Object.entries(charts)
      .filter(([name, svg]) => !existsSync(join(CHARTS, name)) || readFileSync(join(CHARTS, name), 'utf8') !== svg)
      .map(([name]) => name);
    if (stale.length) throw new StepError(`docs/charts/ is not what docs/bench/ gives: ${stale.join(', ')} (run node scripts/charts.mjs)`);
    say(`docs/charts/: ${Object.keys(charts).length} charts, up to date`);
    return;
  }
  mkdirSync(CHARTS, { recursive: true });
  for (const [name, svg] of Object.entries(charts)) writeFileSync(join(CHARTS, name), svg);
  say(`wrote ${Object.keys(charts).map((n) => `docs/charts/${n}`).join(', ')}`);
});
