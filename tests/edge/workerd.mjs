// Runs a Worker script in workerd, Cloudflare's Workers runtime, from the npm package `workerd`
// (its binary ships inside the platform package `@cloudflare/workerd-linux-64` etc.; nothing is
// downloaded at run time). No bundler: the config lists every module the script imports — the
// built SDK (web/dist/*.js) under `ringfence/dist/...` with a `ringfence` entry module, its SIMD
// wasm as a compiled-module import `ringfence/wasm-simd.wasm` (the package export a bundler
// resolves), and data files — as wrangler's bundle would contain them.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT } from '../../scripts/lib/common.mjs';

const require = createRequire(import.meta.url);
const DIST = join(ROOT, 'web', 'dist');

/**
 * The workerd binary and its version (`{ bin, version }`), or `{ skip }` saying exactly why it
 * cannot run on this machine: no binary package for this platform, or the binary does not
 * start. Throws when the package itself is missing (a devDependency: `npm install` fixes it).
 */
export function findWorkerd() {
  try {
    require.resolve('workerd');
  } catch {
    throw new Error('the npm package workerd (a devDependency of tests/) is not installed: run `npm install`');
  }
  let bin;
  try {
    bin = require('workerd').default;
  } catch (e) {
    return { skip: `workerd has no binary for this platform: ${e.message.trim().split('\n')[0]}` };
  }
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  if (r.error || r.status !== 0) {
    const why = r.error?.message ?? `exit ${r.status ?? r.signal}: ${(r.stderr || r.stdout).trim()}`;
    return { skip: `workerd (${bin}) does not start on this machine: ${why}` };
  }
  return { bin, version: r.stdout.trim() };
}

/** Every file under `dir` (relative paths, `/`-separated) whose name ends with `ext`. */
function files(dir, ext, prefix = '') {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) => {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) return files(dir, ext, rel);
    return rel.endsWith(ext) ? [rel] : [];
  });
}

/**
 * Starts workerd serving `script` (an ES module Worker) on 127.0.0.1 (ephemeral port), with
 * the SDK, its SIMD module and `data` (`{ moduleName: path }`, imported as ArrayBuffers)
 * bundled. Outgoing connections may reach loopback only: the default `globalOutbound`
 * ("internet") refuses local and private addresses ("connecting to 127.0.0.1:PORT is not
 * allowed"), so the worker's outbound service is a network allowing `local` alone.
 * Returns `{ url, pid, log, stop() }`; `log` collects workerd's output lines (console.* of the
 * worker).
 */
export async function startWorker(bin, { script, data = {} }) {
  const dir = mkdtempSync(join(tmpdir(), 'ringfence-workerd-'));
  // Paths in `embed` are relative to the config file.
  const embed = (path) => `embed ${JSON.stringify(relative(dir, path))}`;
  const modules = [
    `(name = "worker.mjs", esModule = ${embed(script)})`,
    `(name = "ringfence", esModule = ${JSON.stringify("export * from './ringfence/dist/index.js';")})`,
    ...files(DIST, '.js').map((f) => `(name = ${JSON.stringify(`ringfence/dist/${f}`)}, esModule = ${embed(join(DIST, f))})`),
    `(name = "ringfence/wasm-simd.wasm", wasm = ${embed(join(DIST, 'wasm-simd', 'ringfence_wasm_bg.wasm'))})`,
    ...Object.entries(data).map(([name, path]) => `(name = ${JSON.stringify(name)}, data = ${embed(path)})`),
  ];
  const config = `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "loopback", network = (allow = ["local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);

const worker :Workerd.Worker = (
  modules = [
    ${modules.join(',\n    ')},
  ],
  compatibilityDate = "2025-01-01",
  globalOutbound = "loopback",
);
`;
  writeFileSync(join(dir, 'config.capnp'), config);

  // fd 3: workerd's control messages, e.g. {"event":"listen","socket":"http","port":N}.
  const child = spawn(bin, ['serve', join(dir, 'config.capnp'), '--control-fd=3'], {
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  const log = [];
  for (const s of [child.stdout, child.stderr]) createInterface({ input: s }).on('line', (l) => log.push(l));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`workerd did not listen within 30 s:\n${log.join('\n')}`)), 30_000);
    createInterface({ input: child.stdio[3] }).on('line', (l) => {
      const msg = JSON.parse(l);
      if (msg.event === 'listen' && msg.socket === 'http') {
        clearTimeout(timer);
        resolve(msg.port);
      }
    });
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`workerd exited (${code}) before listening:\n${log.join('\n')}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    log,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill();
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
