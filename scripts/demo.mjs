#!/usr/bin/env node
// `npm run demo`: builds target/release/ringfence when it is missing or older than its sources,
// then runs `ringfence demo` (extra arguments are passed through) and exits with its status.

import { ensureNativeBinary, execAndExit, main } from './lib/common.mjs';

main(() => {
  const bin = ensureNativeBinary();
  execAndExit(bin, ['demo', ...process.argv.slice(2)]);
});
