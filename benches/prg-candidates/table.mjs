// Joins the four `name<TAB>workload<TAB>GB/s` files from run.sh into one Markdown table and
// checks that the real prg.rs produced the same digest everywhere.
import { readFileSync } from 'node:fs';

const cols = ['native generic', 'native target-cpu=native', 'wasm simd128', 'wasm no-SIMD'];
const files = process.argv.slice(2);
const rows = new Map();
const digests = [];
files.forEach((f, i) => {
  for (const line of readFileSync(f, 'utf8').trim().split('\n')) {
    const [name, wl, v] = line.split('\t');
    if (name === '#digest') { digests.push(wl); continue; }
    const key = `${name} ${wl}`;
    if (!rows.has(key)) rows.set(key, Array(files.length).fill('–'));
    rows.get(key)[i] = Number(v).toFixed(2);
  }
});
const keys = [...rows.keys()].sort((a, b) => {
  const [na, wa] = a.split(' '); const [nb, wb] = b.split(' ');
  return wa === wb ? na.localeCompare(nb) : wa === '1m' ? -1 : 1;
});
console.log(`| candidate | draw | ${cols.join(' | ')} |`);
console.log(`|---|---|${cols.map(() => '---:').join('|')}|`);
for (const k of keys) {
  const [name, wl] = k.split(' ');
  console.log(`| ${name} | ${wl === '1m' ? '1 MiB' : '4 KiB fresh'} | ${rows.get(k).join(' | ')} |`);
}
const same = digests.every((d) => d === digests[0]);
console.log(`\nprg.rs output digest: ${digests.join(', ')} — ${same ? 'identical on all targets' : 'MISMATCH'}`);
if (!same) process.exit(1);
