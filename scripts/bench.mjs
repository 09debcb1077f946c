#!/usr/bin/env node
// `npm run bench -- [ARGS]`: builds the release binary, then runs `ringfence bench ARGS` and exits
// with its status. This script's own messages go to stderr, so with `npm run --silent bench --
// --json > out.json` stdout holds only what `ringfence bench` prints. See BENCHMARKS.md.

import { ensureNativeBinary, execAndExit, main } from './lib/common.mjs';

main(() => {
  const bin = ensureNativeBinary({ always: true });
  execAndExit(bin, ['bench', ...process.argv.slice(2)]);
});
