// WebTransport vs WebSocket from a browser page to the relay, end to end: a page in headless
// Chromium is the client of `ringfence local-deployment` (three native server parties) and
// classifies held-out MNIST digits with LeNet (METEOR), alternating between the two transports
// so that both see the same machine load. Prints one JSON line per run (stderr), then the
// medians (stdout).
//
//   RINGFENCE_BIN=target/release/ringfence node tests/browser/bench-transports.mjs [--runs 15]
//
// `connect` is Client.connect: the relay connection, the relay inviting the three parties, and
// the four-way Noise handshakes; `classify` is the request, setup and online stages of one
// classification. Not a test (`npm test` does not run it).
import { startLocalDeployment } from '../../web/examples/local-deployment.mjs';
import { alternate, arg, classifyInPage, median, startBrowser } from './bench-lib.mjs';

const runs = Number(arg('runs', 15));

const d = await startLocalDeployment();
const browser = await startBrowser();
try {
  const page = await browser.page();
  const seen = await alternate(['webtransport', 'websocket'], runs, async (transport, i) => {
    const r = await classifyInPage(page, { o: d.clientOptions(), webTransport: d.webTransport, transport, model: 'lenet', k: (i + 1) % 1000 });
    return { transport, connect_ms: r.connectMs, classify_ms: r.classifyMs, online_ms: r.timings.online, setup_ms: r.timings.setup };
  });
  for (const [t, ls] of seen) {
    const m = (k) => median(ls.map((l) => l[k])).toFixed(1);
    console.log(JSON.stringify({ transport: t, runs: ls.length, median_connect_ms: +m('connect_ms'), median_classify_ms: +m('classify_ms'), median_setup_ms: +m('setup_ms'), median_online_ms: +m('online_ms') }));
  }
} finally {
  await browser.close();
  await d.stop();
}
