// Finds (and on Debian, installs) the Chromium that browser tests and demos drive with
// Playwright. We use the distribution's build: Playwright's own browser download
// (`npx playwright install`) fetches from a host outside the package registries and fails here.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { StepError, bold, dim, say } from './common.mjs';

/** Where Debian's `chromium` package puts the browser. */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/**
 * Flags for a headless run on a CI machine: no sandbox (CI runs as root), no GPU, and no
 * background traffic (update checks, sync), so the browser talks only to the test's servers.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * The path of a Chromium binary: $CHROMIUM_PATH when set, else /usr/bin/chromium, installed
 * with `apt-get install -y chromium` when it is missing and we are root on a machine with apt.
 * Throws StepError saying how to install it otherwise.
 */
export function ensureChromium() {
  const override = process.env.CHROMIUM_PATH;
  if (override) {
    if (!existsSync(override)) throw new StepError(`CHROMIUM_PATH=${override} does not exist`);
    return override;
  }
  if (existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;

  const howTo =
    'Install it with `sudo apt-get update && sudo apt-get install -y chromium` (Debian/Ubuntu),\n' +
    'or point CHROMIUM_PATH at a Chromium or Chrome binary. (Never `npx playwright install`:\n' +
    'its browser download is not reachable from CI.)';
  const root = process.getuid?.() === 0;
  const apt = spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!root || !apt) {
    throw new StepError(`${DEBIAN_CHROMIUM} is missing and ${!apt ? 'apt-get is not available' : 'this is not root'}.\n${howTo}`);
  }

  say(bold(`${DEBIAN_CHROMIUM} is missing: installing Debian's chromium package with apt-get (~30 s)…`));
  const t0 = Date.now();
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'chromium']]) {
    say(dim(`$ apt-get ${args.join(' ')}`));
    const r = spawnSync('apt-get', args, {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (r.status !== 0) throw new StepError(`\`apt-get ${args.join(' ')}\` failed (${r.status ?? r.signal}).\n${howTo}`);
  }
  if (!existsSync(DEBIAN_CHROMIUM)) throw new StepError(`apt-get installed chromium but ${DEBIAN_CHROMIUM} is still missing`);
  say(dim(`chromium installed in ${((Date.now() - t0) / 1000).toFixed(1)} s`));
  return DEBIAN_CHROMIUM;
}
