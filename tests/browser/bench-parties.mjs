// A browser page as a compute party vs native parties, in one run: LeNet on METEOR (batch 1,
// held-out MNIST digits, every class checked against onnxruntime's), the client in a page of
// headless Chromium, per transport between the pages and the relay (WebSocket, WebTransport;
// the native processes always use the WebSocket). Configurations, alternated so that they share
// the machine's load, one warm-up run each:
//
//   native, ahead-of-demand   `ringfence local-deployment`: three `ringfence party` servers in
//                             the relay's lobby, whose mesh makes METEOR setup material before
//                             the request; every run waits until the mesh has refilled its
//                             shelf, so the session takes a ready run (`stocked` at all three)
//                             and its setup is the input mask only.
//   native, in-session        three `ringfence session-party` processes (no mesh) through a
//                             plain `ringfence relay`: the whole setup in the session.
//   browser-wasm, in-session  the same relay and two `session-party` processes as P0 and P1;
//                             P2 is a page (the SDK's `Party.serve`, the wasm module `init()`
//                             picks: SIMD) in a browser context of its own. With `--links
//                             relay,webrtc`, once more with P2 on `RtcTransport` and the natives
//                             on `--webrtc`: P2's pairs with them on direct DataChannels (the
//                             client's links and P0–P1 as they are). WebRTC runs only inside a
//                             private network namespace: the script then runs itself in one
//                             (netns.mjs; the natives bind UDP on its veth address 10.200.0.2).
//
// The client's page has a context of its own too. Before every run (of any configuration) the
// local deployment's mesh is idle (its shelves full), so its refills never overlap a
// measurement.
//
//   RINGFENCE_BIN=target/release/ringfence node tests/browser/bench-parties.mjs [--runs 10]
//     [--transports websocket,webtransport] [--links relay,webrtc]
//
// stdout: one JSON line per configuration, the fields of `ringfence bench --json` (medians over
// the runs: `seconds`/`online_seconds` and `setup_seconds` are the slowest party's own stage
// times, bytes the mean over the three parties of the frame bytes each sent) plus `runtime` (of
// P2: `native` or `browser-wasm`; P0 and P1 are native), `transport` (the pages' connections to
// the relay; the link security, which `ringfence bench` reports there, is `link_security`),
// `setup` (`ahead-of-demand` or `in-session`), the client's view (`client_*_seconds`,
// `total_seconds` = request + setup + online, `connect_seconds`), per-party medians, and the
// load average over the runs; with P2 in the page, its time waiting for its peers and in `send`
// per stage (`p2_*`). Then one line per transport: what the page's Noise links cost per byte
// (encrypting, decrypting). stderr: progress and one line per run. Not a test.
import { generateNoiseKeypair, init, randomSessionId } from 'ringfence';
import { modelPath, serveModel, startLocalDeployment, startRelay } from '../../web/examples/local-deployment.mjs';
import { fileURLToPath } from 'node:url';
import { alternate, arg, classifyInPage, hex, median, say, startBrowser } from './bench-lib.mjs';
import { assertInNetns, netnsRefusal, spawnInNetns } from './netns.mjs';

const runs = Number(arg('runs', 10));
const transports = arg('transports', 'websocket,webtransport').split(',');
const links = arg('links', 'relay').split(',');
/** The native parties' only UDP address for WebRTC: the namespace's own veth end. */
const NATIVE_UDP = '10.200.0.2';
if (links.includes('webrtc')) {
  if (!process.env.RINGFENCE_PARENT_NETNS) {
    // ICE gathers every interface it sees: run in a private network namespace.
    const why = netnsRefusal();
    if (why !== undefined) throw new Error(`--links webrtc runs only inside a private network namespace: \`unshare -n\` is not permitted here (${why})`);
    const child = spawnInNetns([fileURLToPath(import.meta.url), ...process.argv.slice(2)], 'inherit');
    process.exit(await new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1))));
  }
  assertInNetns(import.meta.url);
}
const MODEL = 'lenet';
/** How long the mesh may take to refill its shelves, and a session's processes to exit. */
const PATIENCE_MS = 60_000;

const configs = [
  { runtime: 'native', setup: 'ahead-of-demand', links: 'relay' },
  { runtime: 'native', setup: 'in-session', links: 'relay' },
  ...links.map((l) => ({ runtime: 'browser-wasm', setup: 'in-session', links: l })),
]
  .flatMap((c) => transports.map((transport) => ({ ...c, transport })))
  // RtcTransport's relay links are WebSocket ones.
  .filter((c) => c.links === 'relay' || c.transport === 'websocket');
const label = (c) => `${c.runtime}, ${c.setup}, ${c.transport}${c.links === 'webrtc' ? ', P2 pairs on WebRTC' : ''}`;

/** Resolves once `pred()` holds (checked every 50 ms), or rejects after PATIENCE_MS. */
async function until(pred, what) {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > PATIENCE_MS) throw new Error(`${what}: not within ${PATIENCE_MS} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The local deployment's mesh, from its parties' `prepared` events: `idle()` resolves once no
 * shelf is being filled (every party's every model at its target, nothing made for a second);
 * `refills(since)` are the events of `MODEL`'s METEOR runs made at its target after event number
 * `since`.
 */
function watchMesh(d) {
  const shelves = new Map(); // `${party} ${model} ${backend}` -> the last prepared event
  let last = Date.now();
  const see = (e) => {
    if (e.event !== 'prepared') return;
    e.receivedAt ??= Date.now();
    shelves.set(`${e.party} ${e.model} ${e.backend}`, e);
    last = Date.now();
  };
  d.events.forEach(see);
  d.onEvent(see);
  const full = () => shelves.size > 0 && [...shelves.values()].every((e) => e.ready >= e.target);
  return {
    idle: () => until(() => full() && Date.now() - last > 1000, 'the mesh filling its shelves'),
    refills: (since) => d.events.slice(since).filter((e) => e.event === 'prepared' && e.model === MODEL && e.backend === 'meteor' && e.ready >= e.target),
  };
}

await init();
say('starting the local deployment, a plain relay and the browser');
const d = await startLocalDeployment();
const mesh = watchMesh(d);
const relay = await startRelay(['--webtransport', '127.0.0.1:0']);
const browser = await startBrowser();
let clientPage;
let partyPage;
try {
  clientPage = await browser.page();
  partyPage = await browser.page();
  say(`pages: client ${clientPage.module} module, party ${partyPage.module} module`);
  const seen = await alternate(configs, runs, async (c, i) => {
    await mesh.idle();
    const k = (i + 1) % 1000;
    const r = c.setup === 'ahead-of-demand' ? await lobbyRun(c, k) : await sessionRun(c, k);
    return { config: label(c), ...r };
  });
  for (const [c, rs] of seen) console.log(JSON.stringify(summary(c, rs)));
  for (const transport of transports) console.log(JSON.stringify(await noiseCost(transport)));
} finally {
  await browser.close();
  await relay.stop();
  await d.stop();
}

/** One classification by the local deployment's server parties, stocked; their figures. */
async function lobbyRun(c, k) {
  const since = d.events.length;
  const o = d.clientOptions();
  const session = hex(o.session).slice(0, 8);
  const ended = () => d.events.slice(since).filter((e) => e.session === session && ['answered', 'refused', 'session_failed', 'ended'].includes(e.event));
  const r = await classifyInPage(clientPage, { o, webTransport: d.webTransport, transport: c.transport, model: MODEL, k });
  const answeredAt = Date.now();
  await until(() => ended().length === 3, `session ${session}: the three parties' reports`);
  const byParty = ended().sort((a, b) => a.party - b.party);
  const failed = byParty.find((e) => e.event !== 'answered');
  if (failed) throw new Error(`session ${session}: P${failed.party} ${failed.event}: ${failed.reason ?? failed.error ?? ''}`);
  const parties = byParty.map((e) => ({
    runtime: 'native', setup_seconds: e.setup_seconds, setup_bytes: e.setup_bytes,
    online_seconds: e.online_seconds, online_bytes: e.online_bytes, online_rounds: e.online_rounds, stocked: e.stocked,
  }));
  // What the run taken from the shelf cost the mesh: its refill, made after this session.
  let prepared;
  if (parties.every((p) => p.stocked)) {
    await until(() => new Set(mesh.refills(since).map((e) => e.party)).size === 3, `session ${session}: the mesh's refill`);
    const refill = [0, 1, 2].map((id) => mesh.refills(since).find((e) => e.party === id));
    // The refill starts once the run is taken: while the session's online phase runs, or not.
    const started = Math.min(...refill.map((e) => e.receivedAt - e.seconds * 1000));
    prepared = { seconds: Math.max(...refill.map((e) => e.seconds)), bytes: refill.map((e) => e.bytes), overlap: started < answeredAt };
  }
  return { ...clientFigures(r), parties, prepared };
}

/** One classification by per-session parties: three native, or P2 in the party page. */
async function sessionRun(c, k) {
  const keypairs = [0, 1, 2].map(() => generateNoiseKeypair());
  const keypair = generateNoiseKeypair();
  const sessionId = randomSessionId();
  const inPage = c.runtime === 'browser-wasm';
  const rtc = c.links === 'webrtc';
  const natives = serveModel({
    relayUrl: relay.url, model: modelPath(MODEL), sessionId, keypairs, clientPublicKey: keypair.publicKey, ids: inPage ? [0, 1] : [0, 1, 2],
    args: rtc ? [`--webrtc=${NATIVE_UDP}`] : [],
  });
  try {
    const served = inPage
      ? partyPage.evaluate((a) => window.rf.relayServe(a), {
          url: relay.url,
          webTransport: c.transport === 'webtransport' ? relay.webTransport : undefined,
          session: hex(sessionId),
          id: 2,
          privateKey: hex(keypairs[2].privateKey),
          publicKeys: [...keypairs.map((kp) => hex(kp.publicKey)), hex(keypair.publicKey)],
          model: MODEL,
          rtc,
        })
      : undefined;
    served?.catch(() => {}); // awaited below, after the client's answer
    const o = { relay: relay.url, session: sessionId, parties: keypairs.map((kp) => kp.publicKey), keypair };
    const r = await classifyInPage(clientPage, { o, webTransport: relay.webTransport, transport: c.transport, model: MODEL, k });
    const page = await served;
    if (page && page.transport !== c.transport) throw new Error(`P2 asked for ${c.transport}, got ${page.transport}: ${page.webTransportError}`);
    // A run whose pairs fell back is no WebRTC figure.
    if (rtc && page.links.via.some((v) => v !== 'webrtc')) throw new Error(`P2's pairs: ${page.links.via} (${page.links.fallbackReason})`);
    const outcomes = await natives.done;
    const parties = outcomes.map((out) => {
      if (!out.ok || !out.report) throw new Error(`P${out.id}: ${out.message}\n${out.stderr}`);
      const s = out.report;
      return {
        runtime: 'native', setup_seconds: s.setup_seconds, setup_bytes: s.setup_bytes,
        online_seconds: s.online_seconds, online_bytes: s.online_bytes, online_rounds: s.online_rounds, stocked: false,
      };
    });
    if (page) {
      const { setup, online } = page.stages;
      const { times: t } = page;
      parties.push({
        runtime: 'browser-wasm', setup_seconds: setup.ms / 1000, setup_bytes: setup.bytesSent,
        online_seconds: online.ms / 1000, online_bytes: online.bytesSent, online_rounds: online.rounds, stocked: false,
        setup_recv_bytes: setup.bytesReceived, online_recv_bytes: online.bytesReceived,
        setup_wait_seconds: t.setup.waitMs / 1000, setup_send_seconds: t.setup.sendMs / 1000,
        online_wait_seconds: t.online.waitMs / 1000, online_send_seconds: t.online.sendMs / 1000,
      });
    }
    return { ...clientFigures(r), parties };
  } finally {
    await natives.stop();
  }
}

/**
 * What the party page's Noise links cost per byte over `transport` (medians of 3): 16 frames of
 * 1 MiB sent (encrypted, queued) by one party of the page and received (decrypted) by another.
 */
async function noiseCost(transport) {
  const frames = 16;
  const bytes = 1 << 20;
  const rs = [];
  for (let i = 0; i < 3; i++) {
    await mesh.idle();
    const webTransport = transport === 'webtransport' ? relay.webTransport : undefined;
    const r = await partyPage.evaluate((a) => window.rf.noiseCost(a), { url: relay.url, webTransport, frames, bytes, settleMs: 2000 });
    if (r.transport !== transport) throw new Error(`noise probe: asked for ${transport}, got ${r.transport}`);
    rs.push(r);
  }
  const mib = (frames * bytes) / (1 << 20);
  const send = median(rs.map((r) => r.sendMs)) / 1000;
  const recv = median(rs.map((r) => r.recvMs)) / 1000;
  return {
    probe: `noise ${rs[0].cipher}`, runtime: 'browser-wasm', transport, mib, repeat: rs.length, statistic: 'median',
    send_seconds: send, recv_seconds: recv, send_mib_per_s: mib / send, recv_mib_per_s: mib / recv,
  };
}

/** The client's view of one classification, in seconds. */
function clientFigures(r) {
  const t = r.timings;
  return {
    connect_seconds: r.connectMs / 1000,
    client_request_seconds: t.request / 1000,
    client_setup_seconds: t.setup / 1000,
    client_online_seconds: t.online / 1000,
    total_seconds: (t.request + t.setup + t.online) / 1000,
    client_bytes_sent: r.stats.bytesSent,
  };
}

/** One configuration's line: medians over its runs, `ringfence bench --json`'s fields first. */
function summary(c, rs) {
  const med = (f) => median(rs.map(f));
  const slowest = (stage) => (r) => Math.max(...r.parties.map((p) => p[`${stage}_seconds`]));
  const mean = (stage) => (r) => r.parties.reduce((a, p) => a + p[`${stage}_bytes`], 0) / r.parties.length;
  const perParty = (key) => [0, 1, 2].map((id) => med((r) => r.parties[id][key]));
  const seconds = med(slowest('online'));
  const online = med(mean('online'));
  const loads = rs.map((r) => r.load);
  const stocked = rs.filter((r) => r.parties.every((p) => p.stocked)).length;
  const prepared = rs.filter((r) => r.prepared);
  return {
    op: 'infer', n: 1, ring_bits: 64, seconds, ops_per_s: 1 / seconds,
    bytes_per_party: online, wire_bytes_per_party: null, rounds: Math.max(...rs.flatMap((r) => r.parties.map((p) => p.online_rounds))),
    backend: 'meteor', transport: c.transport, setup_seconds: med(slowest('setup')), setup_bytes_per_party: med(mean('setup')),
    repeat: rs.length, shape: `${MODEL} batch 1`, model: MODEL, batch: 1, online_seconds: seconds, online_bytes_per_party: online,
    payload_bytes_per_party: null,
    // Every run's class was checked against onnxruntime's (a mismatch ends the benchmark).
    accuracy_agreement: 1, network: 'loopback',
    runtime: c.runtime, setup: c.setup, link_security: 'noise-aesgcm', statistic: 'median',
    // P2's links to P0 and P1: through the relay, or WebRTC DataChannels (DTLS, not Noise).
    p2_links: c.links,
    parties_runtime: rs[0].parties.map((p) => p.runtime),
    client_setup_seconds: med((r) => r.client_setup_seconds),
    client_online_seconds: med((r) => r.client_online_seconds),
    total_seconds: med((r) => r.total_seconds),
    connect_seconds: med((r) => r.connect_seconds),
    party_setup_seconds: perParty('setup_seconds'),
    party_online_seconds: perParty('online_seconds'),
    party_setup_bytes: perParty('setup_bytes'),
    party_online_bytes: perParty('online_bytes'),
    client_bytes_sent: med((r) => r.client_bytes_sent),
    // The page party's time waiting for its peers (a recv pending) and in send, per stage, and
    // the bytes it received.
    ...(c.runtime === 'browser-wasm'
      ? Object.fromEntries([
          ...['setup_wait', 'setup_send', 'online_wait', 'online_send'].map((k) => [`p2_${k}_seconds`, med((r) => r.parties[2][`${k}_seconds`])]),
          ...['setup_recv', 'online_recv'].map((k) => [`p2_${k}_bytes`, med((r) => r.parties[2][`${k}_bytes`])]),
        ])
      : {}),
    stocked_runs: stocked,
    ...(prepared.length
      ? {
          prepared_seconds: median(prepared.map((r) => r.prepared.seconds)),
          // Runs whose refill started before the client had its answer (sharing the CPU).
          refill_during_session_runs: prepared.filter((r) => r.prepared.overlap).length,
          prepared_bytes_per_party: [0, 1, 2].map((id) => median(prepared.map((r) => r.prepared.bytes[id]))),
        }
      : {}),
    load_1min: [Math.min(...loads), Math.max(...loads)],
  };
}
