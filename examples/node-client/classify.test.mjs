// Runs classify.mjs as a newcomer would, against `ringfence local-deployment --dev`, and checks
// the class it prints against onnxruntime's class for the same digit
// (models/data/lenet.reference.json), with both protocols.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { referenceSample } from '../../web/examples/local-deployment.mjs';
import { startDevDeployment } from '../../web/test/dev-deployment.mjs';

const run = promisify(execFile);
const script = new URL('./classify.mjs', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'ringfence-node-client-'));
let deployment;
before(async () => {
  deployment = await startDevDeployment();
});
after(async () => {
  await deployment?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** Held-out MNIST test digit `k`, written as the 784-byte file classify.mjs reads. */
function digitFile(k) {
  const ref = JSON.parse(readFileSync(new URL('../../models/data/lenet.reference.json', import.meta.url), 'utf8'));
  const all = readFileSync(new URL(`../../${ref.inputs}`, import.meta.url));
  const file = join(tmp, `digit-${k}.u8`);
  writeFileSync(file, all.subarray(k * 784, (k + 1) * 784));
  return file;
}

for (const [sample, backend] of [[0, 'meteor'], [7, 'rep3']]) {
  test(`classify.mjs sample ${sample} ${backend} prints onnxruntime's class`, { timeout: 120_000 }, async () => {
    const { stdout } = await run(process.execPath, [script, digitFile(sample), backend, deployment.sessionUrl], { timeout: 120_000 });
    const { expected, runtime } = referenceSample('lenet', sample);
    const printed = Number(stdout.match(/^class (\d+) /m)?.[1]);
    assert.equal(printed, expected, `printed class vs ${runtime}'s\n${stdout}`);
    assert.match(stdout, new RegExp(`^class \\d+ \\(${backend}, over websocket\\)$`, 'm'));
    assert.match(stdout, /^time: request [\d.]+ ms, setup [\d.]+ ms, online [\d.]+ ms$/m);
    assert.match(stdout, /^client: sent \d+ B, received \d+ B$/m);
    assert.match(stdout, /^each party received 784 masked or shared values, random to it$/m);
  });
}

test('classify.mjs without a deployment says what to start', async () => {
  const r = await run(process.execPath, [script, digitFile(0), 'meteor', 'http://127.0.0.1:9/session']).catch((e) => e);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /no session at http:\/\/127\.0\.0\.1:9\/session .*ringfence local-deployment --dev/);
});
