#!/usr/bin/env node
// `node scripts/bench-rss-tables.mjs [--ring 64|32] [--parties 3,5,7] [--max 1000000]
// [--ops OP/SOURCE,…]` (e.g. `lt-bounded/rand-bits`): the rss
// paper's batch sweeps (Tables 4, 6, 7 and 8: Mul, RandBit, edaBit, MSB with edaBits and with
// random bits) with `ringfence bench --backend rss`, one run per batch size from 1 to --max,
// printed as Markdown rows: milliseconds per batch, and payload bytes per operation and party.
// Run it on an otherwise idle machine (it starts N processes per figure); BENCHMARKS.md records
// its output. Builds the release binary first.

import { execFileSync } from 'node:child_process';
import { ensureNativeBinary, main } from './lib/common.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
};

main(() => {
  const bin = ensureNativeBinary({ always: true });
  const ring = arg('--ring', '64');
  const parties = arg('--parties', '3,5,7').split(',').map(Number);
  const max = Number(arg('--max', '1000000'));
  const sizes = [1, 10, 100, 1000, 10000, 100000, 1000000].filter((n) => n <= max);
  // [label, op, bit source]: the MSB is `lt-bounded` (one MSB of x − y).
  const only = arg('--ops');
  const rows = [
    ['Mul (Table 4)', 'mul', 'eda-bits'],
    ['RandBit (Table 6)', 'rand-bit', 'eda-bits'],
    ['edaBit (Table 7)', 'eda-bit', 'eda-bits'],
    ['MSB, edaBits (Table 8)', 'lt-bounded', 'eda-bits'],
    ['MSB, random bits (Table 8)', 'lt-bounded', 'rand-bits'],
  ];
  const chosen = only ? rows.filter(([, op, source]) => only.split(',').includes(`${op}/${source}`)) : rows;
  console.log(`| op | N | ${sizes.map((n) => `${n}`).join(' | ')} | B/op | rounds |`);
  console.log(`|---|---:|${sizes.map(() => '---:').join('|')}|---:|---:|`);
  for (const [label, op, source] of chosen) {
    for (const n of parties) {
      const cells = [];
      let bytes = '';
      let rounds = '';
      for (const size of sizes) {
        // Large batches once (after the warm-up), small ones twice.
        const repeat = size >= 100000 ? '1' : '2';
        let out;
        try {
          out = execFileSync(bin, [
            'bench', '--json', '--backend', 'rss', '--parties', `${n}`, '--ring', ring,
            '--bit-source', source, '--ops', op, '--n', `${size}`, '--repeat', repeat,
          ], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
        } catch (e) {
          // A run that fails (e.g. a party killed for memory at the largest batches) is a cell
          // that says so, and the sweep goes on.
          cells.push('failed');
          process.stderr.write(`${label} N=${n} n=${size}: failed (${e.message.split('\n')[0]})\n`);
          continue;
        }
        const line = JSON.parse(out.trim().split('\n').pop());
        const ms = line.seconds * 1000;
        cells.push(ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toPrecision(3)}`);
        bytes = (line.payload_bytes_per_party / size).toFixed(1);
        rounds = `${line.rounds}`;
        process.stderr.write(`${label} N=${n} n=${size}: ${cells.at(-1)}\n`);
      }
      console.log(`| ${label} | ${n} | ${cells.join(' | ')} | ${bytes} | ${rounds} |`);
    }
  }
});
