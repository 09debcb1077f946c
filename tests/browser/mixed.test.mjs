// A browser page as P0 and two native `ringfence party` processes as P1 and P2, through a
// `ringfence relay` on 127.0.0.1 with Noise links end to end (the page's keys come from the
// SDK's generateNoiseKeypair). All three must reveal the same results, equal to plaintext.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { checkPlaintext, hex, runParty, startRelay } from '../../web/test/ws-relay.mjs';
import { pageTest, setupBrowser } from './harness.mjs';

setupBrowser();

let relay;
const relayLog = [];
before(async () => (relay = await startRelay([], relayLog)));
after(() => relay?.stop());

const MIN = -(1n << 63n);
const MAX = (1n << 63n) - 1n;

pageTest('a browser party and two native parties agree with each other and with plaintext', async (page) => {
  await page.evaluate(() => window.rf.init());
  const keys = await page.evaluate(() => window.rf.noiseKeys());
  const publicKeys = keys.map((k) => k.publicKey);
  const d = 3;
  const inputs = [
    [5n, MIN, 0n, 1n, -1n, MAX, 42n, -42n, 9n],
    [6n, 1n, 0n, 1n, 2n, -1n, 42n, -43n, MIN],
    [1n, 2n, 3n, -4n, MAX, -6n, 7n, MIN, 1n << 62n],
  ];
  const session = hex(crypto.getRandomValues(new Uint8Array(16)));
  const native = [1, 2].map((id) =>
    runParty(
      ['--relay', relay.url, '--session', session, '--id', String(id), '--matmul-dim', String(d),
        `--values=${inputs[id].join(',')}`, '--timeout-ms', '20000'],
      { stdin: `${JSON.stringify({ private_key: keys[id].privateKey, public_keys: publicKeys })}\n` },
    ),
  );
  const browser = page.evaluate((args) => window.rf.mixedParty(args), { url: relay.url, session, inputs: inputs[0], d });
  const settled = await Promise.allSettled([browser, ...native]);
  const failed = settled.filter((r) => r.status === 'rejected').map((r) => r.reason?.stack ?? String(r.reason));
  assert.equal(failed.length, 0, `${failed.join('\n')}\nrelay log:\n${relayLog.join('\n')}`);
  const [b, n1, n2] = settled.map((r) => r.value);
  assert.deepEqual(b, checkPlaintext(inputs, d), 'the browser party agrees with plaintext');
  assert.deepEqual(n1, b, 'native P1 agrees with the browser party');
  assert.deepEqual(n2, b, 'native P2 agrees with the browser party');
});

pageTest('a browser party whose peers never join the relay session gets TIMEOUT, not a hang', async (page) => {
  await page.evaluate(async () => (await window.rf.init(), window.rf.noiseKeys()));
  const session = hex(crypto.getRandomValues(new Uint8Array(16)));
  const { err, ms } = await page.evaluate((args) => window.rf.lonelyParty(args), { url: relay.url, session, timeoutMs: 1000 });
  assert.ok(err, 'connect must fail');
  assert.equal(err.ringfence, true, err.message);
  assert.equal(err.code, 'TIMEOUT', err.message);
  assert.ok(ms < 5000, `failed after ${ms} ms`);
});
