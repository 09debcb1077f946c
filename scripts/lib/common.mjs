// Shared helpers of the repository scripts (test, demo, bench). Plain Node ESM, no dependencies.

import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is scripts/lib/common.mjs). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const color = process.stderr.isTTY && !process.env.NO_COLOR;
const paint = (code) => (s) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
export const bold = paint('1');
export const red = paint('31');
export const green = paint('32');
export const yellow = paint('33');
export const dim = paint('2');

/** Progress goes to stderr so that stdout stays clean for machine-readable output (bench --json). */
export function say(msg = '') {
  process.stderr.write(`${msg}\n`);
}

export function formatSeconds(ms) {
  const s = ms / 1000;
  return s < 60 ? `${s.toFixed(1)} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

export function shellQuote(args) {
  return args.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`)).join(' ');
}

/** An error that names what failed; scripts print it and exit with `exitCode`. */
export class StepError extends Error {
  constructor(message, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/**
 * Runs a command in the repository root with inherited stdio; throws StepError unless it exits 0.
 * `env` entries are added to the current environment.
 */
export function run(cmd, args, { env, cwd = ROOT } = {}) {
  const envNote = env ? `${Object.entries(env).map(([k, v]) => `${k}=${shellQuote([v])}`).join(' ')} ` : '';
  say(dim(`$ ${envNote}${shellQuote([cmd, ...args])}`));
  const r = spawnSync(cmd, args, { cwd, stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.error) {
    throw new StepError(
      r.error.code === 'ENOENT' ? `\`${cmd}\` is not installed or not on PATH` : `${cmd}: ${r.error.message}`,
    );
  }
  if (r.status !== 0) {
    const how = r.signal ? `was killed by ${r.signal}` : `exited with status ${r.status}`;
    throw new StepError(`\`${shellQuote([cmd, ...args])}\` ${how}`, r.status || 1);
  }
}

/** Runs a command and returns its stdout (stderr inherited); throws StepError on failure. */
export function capture(cmd, args, { cwd = ROOT } = {}) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
  if (r.error) {
    throw new StepError(
      r.error.code === 'ENOENT' ? `\`${cmd}\` is not installed or not on PATH` : `${cmd}: ${r.error.message}`,
    );
  }
  if (r.status !== 0) throw new StepError(`\`${shellQuote([cmd, ...args])}\` exited with status ${r.status}`);
  return r.stdout;
}

/** `cargo metadata` of the workspace members only (no dependency resolution, works offline). */
export function cargoMetadata() {
  return JSON.parse(capture('cargo', ['metadata', '--no-deps', '--format-version', '1']));
}

/**
 * Finds the workspace package that defines a binary target named `name`.
 * Returns { pkg, binPath, targetDir } or null when no package defines it (yet).
 */
export function findBinary(name = 'ringfence', meta = cargoMetadata()) {
  for (const p of meta.packages) {
    if (!meta.workspace_members.includes(p.id)) continue;
    const t = p.targets.find((t) => t.name === name && t.kind.includes('bin'));
    if (t) {
      return {
        pkg: p.name,
        src: t.src_path,
        targetDir: meta.target_directory,
        binPath: join(meta.target_directory, 'release', name),
      };
    }
  }
  return null;
}

/** Newest modification time (ms) of the files under the given paths (missing paths are ignored). */
export function newestMtime(paths) {
  let newest = 0;
  const visit = (p) => {
    let st;
    try {
      st = statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      for (const e of readdirSync(p)) visit(join(p, e));
    } else {
      newest = Math.max(newest, st.mtimeMs);
    }
  };
  for (const p of paths) visit(resolve(ROOT, p));
  return newest;
}

/** Sources the native `ringfence` binary is built from, for the staleness check. */
export const NATIVE_SOURCES = [
  'Cargo.toml',
  'Cargo.lock',
  'core-rs/Cargo.toml',
  'core-rs/src',
  'relay/Cargo.toml',
  'relay/src',
];

/**
 * Makes sure target/release/ringfence exists and is built from the current sources.
 * `always`: run cargo unconditionally (cargo itself is a no-op when nothing changed).
 * Returns the binary's path; throws StepError with a clear message when the workspace defines no
 * `ringfence` binary yet.
 */
export function ensureNativeBinary({ always = false } = {}) {
  const bin = findBinary('ringfence');
  if (!bin) {
    throw new StepError(
      'The `ringfence` binary does not exist yet: no workspace crate defines a binary target named\n' +
        '`ringfence` (it is planned in relay/, crate ringfence-relay, with the native runtime work).',
    );
  }
  // Cargo leaves the binary untouched when a changed file does not affect it (e.g. a test-only
  // module), so the time of the last successful build is also kept in a stamp file beside it.
  const stamp = `${bin.binPath}.built`;
  const built = existsSync(bin.binPath)
    ? Math.max(statSync(bin.binPath).mtimeMs, existsSync(stamp) ? statSync(stamp).mtimeMs : 0)
    : 0;
  const stale = built === 0 || newestMtime(NATIVE_SOURCES) > built;
  if (built === 0) {
    say(bold('Building the native binary: the first build compiles ~240 crates (3–4 min on an idle 2-core machine, more on a busy one)…'));
  } else if (stale) {
    say(bold('Sources changed since the last build: rebuilding the native binary…'));
  } else if (always) {
    say(bold('Checking that the native release build is up to date…'));
  }
  if (stale || always) {
    const t0 = Date.now();
    run('cargo', ['build', '--release', '-p', bin.pkg, '--bin', 'ringfence']);
    writeFileSync(stamp, `${new Date(t0).toISOString()}\n`);
    utimesSync(stamp, t0 / 1000, t0 / 1000); // edits made during the build still count as newer
    if (stale) say(dim(`built in ${formatSeconds(Date.now() - t0)}`));
  }
  return bin.binPath;
}

/**
 * What is wrong with the installed npm packages, measured against package-lock.json: the first
 * few packages missing or at another version than the lockfile names, or [] when every one is
 * installed as locked. Optional packages (platform-specific binaries) count only when installed.
 */
export function npmPackagesOutOfDate() {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  const problems = [];
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    if (!path.includes('node_modules/')) continue; // the root and the workspaces' own folders
    const dir = join(ROOT, path);
    if (entry.link) {
      if (!lstatExists(dir)) problems.push(`${path} (workspace link) is missing`);
    } else {
      let installed;
      try {
        installed = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
      } catch {
        if (!entry.optional) problems.push(`${path} is missing`);
        continue;
      }
      if (entry.version && installed !== entry.version) {
        problems.push(`${path} is ${installed}, package-lock.json wants ${entry.version}`);
      }
    }
    if (problems.length >= 3) break;
  }
  return problems;
}

const lstatExists = (p) => {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
};

/**
 * Installs the workspace's npm packages with `npm ci` when any is missing or not the version
 * package-lock.json names (a fresh clone, or a pull that changed the lockfile); says why first.
 */
export function ensureNpmPackages() {
  const problems = npmPackagesOutOfDate();
  if (!problems.length) return say(dim('npm packages: installed as package-lock.json names them'));
  const fresh = !existsSync(join(ROOT, 'node_modules'));
  say(
    fresh
      ? 'The npm packages are not installed (no node_modules/): installing them with `npm ci`…'
      : `The npm packages differ from package-lock.json (${problems.join('; ')}): reinstalling them with \`npm ci\`…`,
  );
  run('npm', ['ci', '--no-audit', '--no-fund']);
  const still = npmPackagesOutOfDate();
  if (still.length) throw new StepError(`after \`npm ci\`, still: ${still.join('; ')}`);
}

/** Runs a binary with inherited stdio and exits this process with its exit status. */
export function execAndExit(path, args) {
  say(dim(`$ ${shellQuote([path, ...args])}`));
  const r = spawnSync(path, args, { cwd: ROOT, stdio: 'inherit' });
  if (r.error) {
    say(red(`could not start ${path}: ${r.error.message}`));
    process.exit(1);
  }
  if (r.signal) {
    const signals = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15, SIGABRT: 6 };
    process.exit(128 + (signals[r.signal] ?? 1));
  }
  process.exit(r.status ?? 1);
}

/**
 * Top-level wrapper: prints a StepError's message and exits with its code. `fn` may be async
 * (its rejection is handled the same way).
 */
export function main(fn) {
  const fail = (e) => {
    if (e instanceof StepError) {
      say(red(e.message));
      process.exit(e.exitCode);
    }
    throw e;
  };
  try {
    const result = fn();
    if (result instanceof Promise) result.catch(fail);
  } catch (e) {
    fail(e);
  }
}
