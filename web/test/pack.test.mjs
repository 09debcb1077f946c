// The package as users get it: `npm pack`, check the tarball's contents, install it offline into
// a fresh project outside the repository, and there: run a three-party session, type-check an
// import with a strict tsconfig that has no DOM or Node types, and run the README's two
// quickstart examples (web/examples/quickstart-*) against `ringfence local-deployment --dev`:
// the Node one on this machine's Node (20: no global WebSocket, so through the optional `ws`
// dependency) and the browser one in Chromium, served by Vite's dev server and by `vite build`.
// Each classifies a held-out MNIST digit, checked against onnxruntime's class.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { deflateSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../../scripts/lib/chromium.mjs';
import { referenceSample } from '../examples/local-deployment.mjs';
import { DEFAULT_SESSION_URL, freePort, startDevDeployment } from './dev-deployment.mjs';

const exec = promisify(execFile);
const WEB = fileURLToPath(new URL('..', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'ringfence-pack-'));
const project = join(tmp, 'app');
after(() => rmSync(tmp, { recursive: true, force: true }));

const npm = (args, cwd) => exec('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, maxBuffer: 16 << 20 });

let pack;

before(async () => {
  const { stdout } = await npm(['pack', '--json', '--pack-destination', tmp], WEB);
  [pack] = JSON.parse(stdout);
  // The one dependency, optional `ws` (Node < 22 has no global WebSocket), comes from the
  // workspace's copy packed the same way: npm would fetch it from the registry, tests stay offline.
  const ws = JSON.parse((await npm(['pack', '--json', '--pack-destination', tmp], join(ROOT, 'node_modules', 'ws'))).stdout)[0];
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  await npm(['install', '--offline', join(tmp, pack.filename), join(tmp, ws.filename)], project);
  // Vite and TypeScript from the workspace (not downloaded); linked after `npm install`, which
  // would prune them. They resolve their own dependencies from the workspace.
  for (const tool of ['vite', 'typescript']) symlinkSync(join(ROOT, 'node_modules', tool), join(project, 'node_modules', tool));
});

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

test('npm pack ships both wasm modules, the types, the README and the metadata; the tarball installs offline and runs', async () => {
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
  // What the registry page shows and links to.
  assert.match(manifest.repository?.url ?? '', /^git\+https:\/\/github\.com\/.+\.git$/);
  assert.ok(manifest.homepage && manifest.bugs?.url && manifest.keywords?.length > 3, 'homepage, bugs and keywords');
  assert.equal(typeof manifest.optionalDependencies?.ws, 'string', 'ws is an optional dependency (Node 20 has no WebSocket)');
  assert.deepEqual(Object.keys(manifest.dependencies ?? {}), [], 'no other runtime dependency');
});

test("the packed README's links resolve outside the repository (absolute URLs or #anchors)", () => {
  const readme = readFileSync(join(project, 'node_modules', 'ringfence', 'README.md'), 'utf8');
  const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
  assert.ok(links.length > 5, 'the README has links');
  const relative = links.filter((l) => !/^(https?:\/\/|#)/.test(l));
  assert.deepEqual(relative, [], 'links into the repository do not resolve on npm');
  const anchors = new Set([...readme.matchAll(/^#+ (.+)$/gm)].map((m) => slug(m[1])));
  for (const l of links.filter((x) => x.startsWith('#'))) assert.ok(anchors.has(l.slice(1)), `no heading for ${l}`);
});

/** GitHub's heading anchor. */
function slug(heading) {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

test('the .d.ts type-check in a strict project without DOM or Node types (lib es2022, types [], skipLibCheck false)', async () => {
  const dir = join(project, 'types');
  mkdirSync(dir);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022'], types: [],
      skipLibCheck: false, strict: true, noEmit: true,
    },
    include: ['app.ts'],
  }));
  // Uses the API surface whose types came from the DOM before: signals, wasm sources, ports, hex.
  writeFileSync(join(dir, 'app.ts'), `
import { Client, MessagePortTransport, fromHex, init, toHex, type AbortSignalLike, type ClientOptions } from 'ringfence';
await init({ wasm: { simd: new Uint8Array(8).buffer, nosimd: 'ringfence_wasm_bg.wasm' } });
declare const signal: AbortSignalLike;
const options: ClientOptions = {
  relay: 'ws://127.0.0.1:9000', deployment: 'local', session: toHex(fromHex('00'.repeat(16))),
  parties: ['11'.repeat(32), '22'.repeat(32), fromHex('33'.repeat(32))], token: 't', signal,
};
const client = await Client.connect(options);
const { classes } = await client.classify('lenet', new Uint8ClampedArray(784), { inputRange: [0, 1] });
const row = MessagePortTransport.channels(3)[0];
export const out: [number | undefined, number] = [classes[0], row?.length ?? 0];
`);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  const tsc = join(project, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = await exec(process.execPath, [tsc, '-p', dir]).catch((e) => e);
  assert.equal(r.code ?? 0, 0, `tsc --noEmit failed:\n${r.stdout}${r.stderr}`);
});

// The README's quickstarts against `ringfence local-deployment --dev`, on a free port instead of
// 8787 (the examples' URL is replaced, nothing else).
let dev;
const deployment = () => (dev ??= startDevDeployment());
after(async () => (await dev?.catch(() => undefined))?.stop());

test('the README Node quickstart classifies a digit as onnxruntime does (Node ' + process.versions.node + ')', { timeout: 180_000 }, async () => {
  const { sessionUrl } = await deployment();
  const k = 3;
  const { expected, runtime } = referenceSample('lenet', k);
  writeFileSync(join(project, 'digit.u8'), mnistDigit(k));
  writeFileSync(join(project, 'classify.mjs'), example('quickstart-node.mjs', sessionUrl));
  const { stdout } = await exec(process.execPath, ['classify.mjs', 'digit.u8'], { cwd: project, timeout: 120_000 });
  assert.equal(Number(stdout.match(/^class (\d+)$/m)?.[1]), expected, `printed class vs ${runtime}'s\n${stdout}`);
  assert.match(stdout, /^P0 received 784 masked values$/m);
});

test(
  'without ws (npm install --omit=optional), Node < 22 gets an error that says what to install',
  { skip: globalThis.WebSocket ? `Node ${process.versions.node} has a global WebSocket` : false },
  async () => {
    // A copy of the installed package where `ws` cannot be resolved.
    const bare = join(tmp, 'bare');
    mkdirSync(join(bare, 'node_modules'), { recursive: true });
    cpSync(join(project, 'node_modules', 'ringfence'), join(bare, 'node_modules', 'ringfence'), { recursive: true });
    writeFileSync(join(bare, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(join(bare, 'connect.mjs'), `
import { Client, init } from 'ringfence';
await init();
const key = '11'.repeat(32);
await Client.connect({ relay: 'ws://127.0.0.1:9', deployment: 'local', token: 't', session: '00'.repeat(16), parties: [key, key, key] })
  .catch((e) => console.log(e.code, e.message));
`);
    const { stdout } = await exec(process.execPath, ['connect.mjs'], { cwd: bare });
    assert.match(stdout, /^INVALID_ARGUMENT no WebSocket implementation: .*`ws` package, an optional dependency of ringfence, is not installed.*`npm install ws`, or pass options.WebSocket\n$/);
  },
);

test('the README browser quickstart classifies a digit in Chromium, from Vite dev server and from vite build', { timeout: 300_000 }, async () => {
  const { sessionUrl } = await deployment();
  const k = 7;
  const { expected, runtime } = referenceSample('lenet', k);
  const site = join(project, 'site');
  mkdirSync(join(site, 'public'), { recursive: true });
  writeFileSync(join(site, 'index.html'), '<!doctype html><title>ringfence</title><body>working</body><script type="module" src="/main.js"></script>\n');
  writeFileSync(join(site, 'main.js'), example('quickstart-browser.js', sessionUrl));
  writeFileSync(join(site, 'public', 'digit.png'), grayPng(mnistDigit(k), 28, 28));
  const vite = join(project, 'node_modules', 'vite', 'bin', 'vite.js');
  const browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
  try {
    const devServer = await startServer([vite, '--host', '127.0.0.1', '--strictPort', '--port'], site, 'vite');
    try {
      assert.match(await pageText(browser, devServer.url), new RegExp(`^class ${expected} \\(`), `Vite dev server: class vs ${runtime}'s`);
    } finally {
      devServer.stop();
    }
    await exec(process.execPath, [vite, 'build'], { cwd: site, timeout: 120_000 });
    const preview = await startServer([vite, 'preview', '--host', '127.0.0.1', '--strictPort', '--port'], site, 'vite preview');
    try {
      assert.match(await pageText(browser, preview.url), new RegExp(`^class ${expected} \\(`), `vite build: class vs ${runtime}'s`);
    } finally {
      preview.stop();
    }
  } finally {
    await browser.close();
  }
});

/** The README example `name` with its session URL pointed at `sessionUrl`. */
function example(name, sessionUrl) {
  const code = readFileSync(new URL(`../examples/${name}`, import.meta.url), 'utf8');
  assert.ok(code.includes(DEFAULT_SESSION_URL), `${name} fetches ${DEFAULT_SESSION_URL}`);
  return code.replaceAll(DEFAULT_SESSION_URL, sessionUrl);
}

/** Held-out MNIST test digit `k` as its 784 bytes (what lenet.reference.json's argmax is for). */
function mnistDigit(k) {
  const ref = JSON.parse(readFileSync(join(ROOT, 'models', 'data', 'lenet.reference.json'), 'utf8'));
  return readFileSync(join(ROOT, ref.inputs)).subarray(k * 784, (k + 1) * 784);
}

/** An 8-bit grayscale PNG of `pixels` (no colour profile, so the canvas reads them back as is). */
function grayPng(pixels, width, height) {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth; colour type 0 (grayscale), no interlace: the rest stay 0
  const rows = Buffer.alloc((width + 1) * height);
  for (let y = 0; y < height; y++) Buffer.from(pixels.subarray(y * width, (y + 1) * width)).copy(rows, y * (width + 1) + 1);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

/** The page's text once the example wrote its answer; fails on a page error or after 90 s. */
async function pageText(browser, url) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  try {
    await page.goto(url);
    await page.waitForFunction(() => /^class /.test(document.body.textContent ?? ''), null, { timeout: 90_000 }).catch((e) => {
      throw new Error(`${url}: no answer (${e.message}); page errors: ${errors.join(' | ') || 'none'}`);
    });
    return await page.evaluate(() => document.body.textContent);
  } finally {
    await page.close();
  }
}

/** Starts `node ARGS PORT` in `cwd` (a Vite server) and waits until it answers HTTP. */
async function startServer(args, cwd, what) {
  const port = await freePort();
  const child = spawn(process.execPath, [...args, String(port)], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  const url = `http://127.0.0.1:${port}/`;
  for (const t0 = Date.now(); ; ) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}):\n${log}`);
    if (await fetch(url).then((r) => r.ok, () => false)) break;
    if (Date.now() - t0 > 30_000) {
      child.kill();
      throw new Error(`${what} did not answer at ${url} within 30 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, stop: () => child.kill() };
}
