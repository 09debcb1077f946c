// Runs classify.mjs as a newcomer would and checks the class it prints against onnxruntime's
// class for the same digit (models/data/lenet.reference.json), with both protocols.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { referenceSample } from '../../web/examples/local-deployment.mjs';

const run = promisify(execFile);
const script = new URL('./classify.mjs', import.meta.url).pathname;

for (const [sample, backend] of [[0, 'meteor'], [7, 'rep3']]) {
  test(`classify.mjs ${sample} ${backend} prints onnxruntime's class`, async () => {
    const { stdout } = await run(process.execPath, [script, String(sample), backend], { timeout: 120_000 });
    const { expected, runtime } = referenceSample('lenet', sample);
    const printed = Number(stdout.match(/^class (\d+) /m)?.[1]);
    assert.equal(printed, expected, `printed class vs ${runtime}'s\n${stdout}`);
    assert.match(stdout, /^time: request [\d.]+ ms, setup [\d.]+ ms, online [\d.]+ ms$/m);
    assert.match(stdout, /^client: sent \d+ B, received \d+ B$/m);
    for (const p of [0, 1, 2]) assert.match(stdout, new RegExp(`^P${p}: answered, sent \\d+ B in setup, \\d+ B online$`, 'm'));
  });
}
