// The README's example is web/examples/three-parties.mjs, included verbatim: this test checks
// that the README still contains it and runs it, comparing what it prints.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const EXAMPLE = new URL('../examples/three-parties.mjs', import.meta.url);
const README = new URL('../README.md', import.meta.url);

test('README includes examples/three-parties.mjs verbatim', () => {
  const code = readFileSync(EXAMPLE, 'utf8');
  assert.ok(readFileSync(README, 'utf8').includes('```js\n' + code + '```\n'), 'README.md must contain the example in a ```js block');
});

test('the README example runs and prints the documented results', async () => {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [fileURLToPath(EXAMPLE)], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
  });
  assert.equal(stderr, '');
  assert.equal(
    stdout,
    [
      'x·y   = [ 15n, -28n, 0n ]',
      'x < y = [ 1, 1, 0 ]',
      "r²    = [ '2.2500', '5.0625', '0.2500' ]",
      'true LENGTH_MISMATCH',
      '',
    ].join('\n'),
  );
});
