// Preflight of the browser tests, run once by `npm test -w tests` before `node --test` starts
// the test files (in parallel, so they must not each install things): the built SDK and the
// native binary must exist; Chromium and playwright-core are installed when missing.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureChromium } from '../../scripts/lib/chromium.mjs';
import { ROOT, StepError, bold, dim, main, say } from '../../scripts/lib/common.mjs';
import { ringfenceBinary } from '../../web/test/ws-relay.mjs';

// Exits with a message naming `npm run build -w web` when web/dist is missing or stale.
await import('../../web/test/check-build.mjs');

main(() => {
  try {
    ringfenceBinary();
  } catch (e) {
    throw new StepError(`browser tests: ${e.message}`);
  }
  say(dim(`chromium: ${ensureChromium()}`));
  ensurePlaywright();
});

/** Installs the pinned playwright-core (the tests' devDependency) when it is absent or another version. */
function ensurePlaywright() {
  const pinned = JSON.parse(readFileSync(join(ROOT, 'tests', 'package.json'), 'utf8')).devDependencies['playwright-core'];
  // npm hoists workspace dependencies to the root node_modules.
  const manifest = join(ROOT, 'node_modules', 'playwright-core', 'package.json');
  const found = existsSync(manifest) ? JSON.parse(readFileSync(manifest, 'utf8')).version : undefined;
  if (found === pinned) return say(dim(`playwright-core ${found}`));
  say(bold(`playwright-core ${pinned} is ${found ? `not installed (found ${found})` : 'missing'}: installing it with npm (no browser download)…`));
  const args = ['install', '--workspace', 'tests', '--no-audit', '--no-fund'];
  say(dim(`$ npm ${args.join(' ')}`));
  const r = spawnSync('npm', args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new StepError(`\`npm ${args.join(' ')}\` failed (${r.status ?? r.signal})`);
}
