// What the browser benchmarks (bench-transports.mjs, bench-parties.mjs) share: the command line,
// the test page in headless Chromium, a classification by the page's client, and the run loop
// that alternates configurations (one warm-up run each, not counted) so that all of them see
// the same machine load.
import { loadavg } from 'node:os';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../../scripts/lib/chromium.mjs';
import { referenceSample } from '../../web/examples/local-deployment.mjs';
import { serve } from './harness.mjs';

/** The value after `--NAME` on the command line, else `dflt`. */
export function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

export const hex = (b) => Buffer.from(b).toString('hex');

/** The median of `xs` (the upper one of an even count). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Progress and per-run lines go to stderr; stdout carries the results only. */
export const say = (m) => process.stderr.write(`${m}\n`);

/**
 * Starts the static server of the test page and headless Chromium; resolves with `{ page(),
 * close() }`, `page()` opening the test page in a browser context of its own (own renderer
 * process and storage) and resolving with it once `window.rf` is initialised, with the module
 * `init()` loaded as `page.module`.
 */
export async function startBrowser() {
  const site = await serve();
  const browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
  return {
    async page() {
      const page = await (await browser.newContext()).newPage();
      page.on('pageerror', (e) => say(`page exception: ${e.stack ?? e}`));
      await page.goto(site.url);
      await page.waitForFunction(() => window.rf);
      page.module = (await page.evaluate(() => window.rf.init())).module;
      return page;
    },
    async close() {
      await browser.close();
      await site.close();
    },
  };
}

/**
 * Classifies held-out sample `k` of `model` (METEOR, batch 1) in `page` with `Client.connect`
 * options `o` (bytes, as Node has them) over `transport` (`'webtransport'`: `webTransport` is
 * the relay's front end; `'websocket'`: none); fails unless the client used that transport and
 * got onnxruntime's class. Resolves with `rf.classifyVia`'s answer.
 */
export async function classifyInPage(page, { o, webTransport, transport, model, k }) {
  const { input, expected } = referenceSample(model, k);
  const args = {
    o: {
      ...o,
      session: hex(o.session),
      parties: o.parties.map(hex),
      keypair: o.keypair && { privateKey: hex(o.keypair.privateKey), publicKey: hex(o.keypair.publicKey) },
      webTransport: transport === 'webtransport' ? webTransport : undefined,
    },
    model,
    input: Array.from(input),
  };
  const r = await page.evaluate((a) => window.rf.classifyVia(a), args);
  if (r.transport !== transport) throw new Error(`asked for ${transport}, got ${r.transport}: ${r.webTransportError}`);
  if (r.class !== expected) throw new Error(`sample ${k}: class ${r.class}, onnxruntime says ${expected}`);
  return r;
}

/**
 * Runs `run(config, i)` for `i` = -1 (the warm-up, not counted) then 0 … `runs` − 1, each `i`
 * for every configuration in turn (in reverse order every other round, so that none always
 * follows the same one); each counted result gets the 1-minute load average read before it
 * (`load`), is printed on stderr, and is collected per configuration. Resolves with a Map from
 * each configuration to its results.
 */
export async function alternate(configs, runs, run) {
  const seen = new Map(configs.map((c) => [c, []]));
  for (let i = -1; i < runs; i++) {
    for (const c of i % 2 ? [...configs].reverse() : configs) {
      const load = loadavg()[0];
      const r = { ...(await run(c, i)), load };
      if (i < 0) continue;
      seen.get(c).push(r);
      say(JSON.stringify({ run: i, ...r }));
    }
  }
  return seen;
}
