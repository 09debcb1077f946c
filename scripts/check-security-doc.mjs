#!/usr/bin/env node
// SECURITY.md backs each claim with the tests that check it, named `crate/tests/FILE.rs::TEST`
// or by file with the tests' names in parentheses. This fails when a named file or test no
// longer exists, so the page cannot keep citing a test that was renamed or removed.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, green, main, red, say, StepError } from './lib/common.mjs';

main(() => {
  const page = readFileSync(join(ROOT, 'SECURITY.md'), 'utf8');
  const missing = [];
  let count = 0;
  const hasTest = (file, test) => new RegExp(`\\bfn ${test}\\b`).test(readFileSync(join(ROOT, file), 'utf8'));
  // `path.rs::test`
  for (const [, file, test] of page.matchAll(/`([\w./-]+\.rs)::(\w+)`/g)) {
    count++;
    if (!existsSync(join(ROOT, file))) missing.push(`${file} (file)`);
    else if (!hasTest(file, test)) missing.push(`${file}::${test}`);
  }
  // `path.rs` (`test`, `test`, …)
  for (const [, file, list] of page.matchAll(/`([\w./-]+\.rs)` \(((?:`\w+`,?\s*)+)\)/g)) {
    for (const [, test] of list.matchAll(/`(\w+)`/g)) {
      count++;
      if (!existsSync(join(ROOT, file))) missing.push(`${file} (file)`);
      else if (!hasTest(file, test)) missing.push(`${file}::${test}`);
    }
  }
  if (count === 0) throw new StepError('SECURITY.md names no test: the pattern in this script no longer matches the page');
  if (missing.length) {
    say(red(`SECURITY.md names tests that do not exist:\n  ${missing.join('\n  ')}`));
    throw new StepError('update SECURITY.md (or restore the tests)');
  }
  say(green(`SECURITY.md: all ${count} named tests exist`));
});
