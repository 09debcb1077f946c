// The README's examples are files under web/examples/, included verbatim: this test checks that
// the README still contains each one and runs it, comparing what it prints. (The quick starts,
// which need `ringfence local-deployment --dev` and a browser, run in pack.test.mjs, from the
// packed package; classify.mjs, which the README links to, runs here.)
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const README = new URL('../README.md', import.meta.url);

/** Checks that the README includes `examples/NAME` verbatim. */
function includedVerbatim(name) {
  test(`README includes examples/${name} verbatim`, () => {
    const code = readFileSync(new URL(`../examples/${name}`, import.meta.url), 'utf8');
    assert.ok(readFileSync(README, 'utf8').includes('```js\n' + code + '```\n'), 'README.md must contain the example in a ```js block');
  });
}

/**
 * Checks that the README includes `examples/NAME` (or, `linked`, links to it) and that it prints
 * `lines` (and no stderr).
 */
function readmeExample(name, lines, why, { linked = false } = {}) {
  const example = new URL(`../examples/${name}`, import.meta.url);
  if (linked) {
    test(`README links to examples/${name}`, () => {
      assert.ok(readFileSync(README, 'utf8').includes(`/web/examples/${name})`), `README.md must link to examples/${name}`);
    });
  } else {
    includedVerbatim(name);
  }
  test(`the README example ${name} runs and prints ${why}`, async () => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [fileURLToPath(example)], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
    });
    assert.equal(stderr, '');
    assert.equal(stdout, [...lines, ''].join('\n'));
  });
}

readmeExample(
  'three-parties.mjs',
  ['x·y   = [ 15n, -28n, 0n ]', 'x < y = [ 1, 1, 0 ]', "r²    = [ '2.2500', '5.0625', '0.2500' ]", 'true LENGTH_MISMATCH'],
  'the documented results',
);

// Against native parties (the release `ringfence` binary, as the ws tests use).
readmeExample(
  'classify.mjs',
  [
    'connecting: 0 B sent',
    'request: 0 B sent',
    'setup: 228 B sent', // the request: 3 frames of 28 + 48 bytes
    'online: 228 B sent',
    'done: 19128 B sent', // + the masked input: 3 frames of 28 + 784 × 8 bytes
    'class 1', // onnxruntime's answer (models/data/nn-a.reference.json)
    'P0 received 784 masked values',
  ],
  "onnxruntime's class",
  { linked: true },
);

includedVerbatim('quickstart-node.mjs');
includedVerbatim('quickstart-browser.js');
