// The package as users get it: `npm pack`, check the tarball's contents, install it offline into
// a fresh project outside the repository and run a three-party session there.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const WEB = fileURLToPath(new URL('..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'ringfence-pack-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const npm = (args, cwd) => exec('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, maxBuffer: 16 << 20 });

/** Runs in the fresh project: mul of random and edge values, checked against BigInt. */
const SESSION = `
import { InMemoryNetwork, Party, init, insecureTestSeeds, randomSessionId } from 'ringfence';
const info = await init();
const MIN = -(1n << 63n), MAX = (1n << 63n) - 1n, EDGES = [0n, 1n, -1n, MIN, MAX];
const random = () => new BigInt64Array(crypto.getRandomValues(new BigUint64Array(1)).buffer)[0];
const xs = [], ys = [];
for (const a of EDGES) for (const b of EDGES) xs.push(a), ys.push(b);
for (let i = 0; i < 1000; i++) xs.push(random()), ys.push(random());
const n = xs.length, net = new InMemoryNetwork(3, { timeoutMs: 20000 }), sessionId = randomSessionId();
const parties = await Promise.all([0, 1, 2].map(async (id) =>
  Party.join({ id, sessionId, seeds: await insecureTestSeeds('pack', id), transport: net.transport(id) })));
const outs = await Promise.all(parties.map(async (p, id) => {
  const x = await p.input(0, id === 0 ? BigInt64Array.from(xs) : null, n);
  const y = await p.input(1, id === 1 ? BigInt64Array.from(ys) : null, n);
  return p.reveal(await p.mul(x, y));
}));
let bad = 0;
for (const out of outs) for (let i = 0; i < n; i++) if (out[i] !== BigInt.asIntN(64, xs[i] * ys[i])) bad++;
console.log(JSON.stringify({ module: info.module, n, bad }));
`;

test('npm pack ships both wasm modules, the types and the README; the tarball installs offline and runs', async () => {
  const { stdout } = await npm(['pack', '--json', '--pack-destination', tmp], WEB);
  const [pack] = JSON.parse(stdout);
  const files = new Set(pack.files.map((f) => f.path));
  for (const f of [
    'package.json',
    'README.md',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/party.d.ts',
    'dist/wasm-simd/ringfence_wasm.js',
    'dist/wasm-simd/ringfence_wasm_bg.wasm',
    'dist/wasm-nosimd/ringfence_wasm.js',
    'dist/wasm-nosimd/ringfence_wasm_bg.wasm',
  ]) {
    assert.ok(files.has(f), `the tarball lacks ${f}`);
  }
  for (const f of files) assert.ok(!/^(src|test|bench|scripts|tools|examples)\//.test(f), `the tarball should not ship ${f}`);

  const project = join(tmp, 'app');
  await exec('mkdir', [project]);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  // --offline: the package has no dependencies, so nothing but the tarball is needed.
  await npm(['install', '--offline', join(tmp, pack.filename)], project);
  writeFileSync(join(project, 'session.mjs'), SESSION);
  const run = await exec(process.execPath, ['session.mjs'], { cwd: project });
  assert.deepEqual(JSON.parse(run.stdout), { module: 'simd', n: 1025, bad: 0 });

  // The types are where the installed package's exports say they are.
  const installed = join(project, 'node_modules', 'ringfence');
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  assert.match(readFileSync(join(installed, manifest.exports['.'].types), 'utf8'), /export \{ DaBitStore, Party,/);
  // So are the wasm modules bundlers import for edge workers (`ringfence/wasm-simd.wasm`).
  for (const kind of ['simd', 'nosimd']) {
    const wasm = readFileSync(join(installed, manifest.exports[`./wasm-${kind}.wasm`]));
    assert.ok(WebAssembly.validate(wasm), `the export ./wasm-${kind}.wasm is a valid module`);
  }
});
