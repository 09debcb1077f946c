#!/usr/bin/env node
// `npm run demo [-- --once] [-- RINGFENCE-DEMO-ARGS]`:
//
//   1. builds target/release/ringfence when it is missing or older than its sources
//      (RINGFENCE_BIN: use that binary instead, as the tests do);
//   2. runs `ringfence demo` (the other arguments are passed through): a headless private
//      classification on a local deployment, checked against onnxruntime. CI runs this; a
//      failure ends the script with its status;
//   3. only in a terminal (stdout a TTY, no CI variable, no --once): gets the demo web app
//      (examples/demo) ready — npm packages, the built SDK — starts it on 127.0.0.1, prints its
//      URL and serves it until Ctrl-C, which stops the app and every relay and party process
//      it started.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  ROOT, StepError, bold, dim, ensureNativeBinary, ensureNpmPackages, green, main, run, say,
} from './lib/common.mjs';

const USAGE = `usage: npm run demo [-- --once] [-- ringfence demo options]

  --once   run the headless classification only (as in CI), not the web app
  other options go to \`ringfence demo\` (e.g. --model nn-a --backend rep3 --sample 12;
  \`npm run demo -- --help\` lists them)`;

const args = process.argv.slice(2);
const once = args.includes('--once');
const help = args.includes('--help') || args.includes('-h');
const demoArgs = args.filter((a) => a !== '--once');

main(async () => {
  if (help) say(`${USAGE}\n`);

  say(bold('── The native binary'));
  const bin = nativeBinary();

  say(bold('\n── A headless private classification (`ringfence demo`)'));
  run(bin, ['demo', ...demoArgs]);
  if (help) return;

  const skip = !process.stdout.isTTY ? 'stdout is not a terminal' : process.env.CI ? 'CI is set' : once ? '--once' : undefined;
  if (skip) {
    say(dim(`\nNot starting the demo web app (${skip}); \`npm run demo\` in a terminal starts it.`));
    return;
  }
  await serveWebApp(bin);
});

function nativeBinary() {
  const given = process.env.RINGFENCE_BIN;
  if (!given) {
    const bin = ensureNativeBinary();
    say(dim(`${relative(ROOT, bin)}: ready`));
    return bin;
  }
  if (!existsSync(given)) throw new StepError(`RINGFENCE_BIN=${given} does not exist`);
  say(dim(`using RINGFENCE_BIN=${given} (not rebuilt)`));
  return given;
}

async function serveWebApp(bin) {
  say(bold('\n── The demo web app (examples/demo)'));
  ensureNpmPackages();
  ensureSdkBuilt();
  // The app's deployments run the binary checked above.
  process.env.RINGFENCE_BIN = bin;
  const { startDemoServer } = await import('../examples/demo/server/start.mjs');
  say('Starting its server (Vite) on 127.0.0.1…');
  const app = await startDemoServer({ port: 5173 });
  say(`\n  ${green(bold('Open'))} ${bold(app.url)} ${green(bold('in your browser.'))}\n`);
  say(dim('  Each classification starts a relay and three party processes on 127.0.0.1 and stops them'));
  say(dim('  once it is done. Press Ctrl-C to stop.\n'));

  const signal = await new Promise((resolve) => {
    process.once('SIGINT', () => resolve('Ctrl-C'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  // A second Ctrl-C does not wait for the clean stop.
  process.once('SIGINT', () => process.exit(130));
  say(`\n${signal}: stopping the web app and the relay and party processes it started…`);
  await app.close();
  say('Stopped.');
}

/** Builds the SDK (web/dist: wasm modules and JavaScript) when it is missing or stale. */
function ensureSdkBuilt() {
  const check = spawnSync(process.execPath, [join(ROOT, 'web', 'test', 'check-build.mjs')], { encoding: 'utf8' });
  if (check.status === 0) return say(dim('SDK (web/dist): built and current'));
  say(`${check.stderr.trim().replace(/^web tests: /, 'The SDK: ')}`);
  say('Building it (the first time installs the pinned wasm-bindgen CLI and takes a few minutes)…');
  run('npm', ['run', 'build', '-w', 'web']);
}
