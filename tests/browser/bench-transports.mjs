// WebTransport vs WebSocket from a browser page to the relay, end to end: a page in headless
// Chromium is the client of `ringfence local-deployment` (three native server parties) and
// classifies held-out MNIST digits with LeNet (METEOR), alternating between the two transports
// so that both see the same machine load. Prints one JSON line per run, then the medians.
//
//   RINGFENCE_BIN=target/release/ringfence node tests/browser/bench-transports.mjs [--runs 15]
//
// `connect` is Client.connect: the relay connection, the relay inviting the three parties, and
// the four-way Noise handshakes; `classify` is the request, setup and online stages of one
// classification. Not a test (`npm test` does not run it).
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../../scripts/lib/chromium.mjs';
import { referenceSample, startLocalDeployment } from '../../web/examples/local-deployment.mjs';
import { serve } from './harness.mjs';

const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 15;
const hex = (b) => Buffer.from(b).toString('hex');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const d = await startLocalDeployment();
const site = await serve();
const browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
try {
  const page = await browser.newPage();
  await page.goto(site.url);
  await page.waitForFunction(() => window.rf);
  await page.evaluate(() => window.rf.init());
  const seen = { webtransport: [], websocket: [] };
  // One warm-up run each (module compilation, the parties' first session), not counted.
  for (let i = -1; i < runs; i++) {
    for (const want of ['webtransport', 'websocket']) {
      const o = d.clientOptions();
      const { input, expected } = referenceSample('lenet', (i + 1) % 1000);
      const args = {
        o: { ...o, session: hex(o.session), parties: o.parties.map(hex), webTransport: want === 'webtransport' ? d.webTransport : undefined },
        model: 'lenet',
        input: Array.from(input),
      };
      const r = await page.evaluate((a) => window.rf.classifyVia(a), args);
      if (r.transport !== want) throw new Error(`asked for ${want}, got ${r.transport}: ${r.webTransportError}`);
      if (r.class !== expected) throw new Error(`run ${i}: class ${r.class}, onnxruntime says ${expected}`);
      const line = { transport: want, connect_ms: r.connectMs, classify_ms: r.classifyMs, online_ms: r.timings.online, setup_ms: r.timings.setup };
      if (i >= 0) {
        seen[want].push(line);
        console.log(JSON.stringify(line));
      }
    }
  }
  for (const [t, ls] of Object.entries(seen)) {
    const m = (k) => median(ls.map((l) => l[k])).toFixed(1);
    console.log(JSON.stringify({ transport: t, runs: ls.length, median_connect_ms: +m('connect_ms'), median_classify_ms: +m('classify_ms'), median_setup_ms: +m('setup_ms'), median_online_ms: +m('online_ms') }));
  }
} finally {
  await browser.close();
  await site.close();
  await d.stop();
}
