// A party tab of the "three tabs" deployment (party.html?room=ROOM&party=I): compute party I,
// serving the demo tab's classifications one after the other. For each, it makes a fresh Noise
// keypair (the private half never leaves this tab), links to the other two party tabs over
// WebRTC DataChannels (RtcTransport; the signalling runs inside the Noise links through the
// relay) and to the demo tab's client through the relay, serves the request, and shows what it
// saw of the input: noise. The demo tab's side is tabs.ts.
import {
  Party, RingfenceError, RtcTransport, generateNoiseKeypair, init,
  type ProgressEvent, type RtcLinkKind, type ServeStages, type Transport,
} from 'ringfence';
import { ROLES, SETS, modelInfo, modelUrl } from './catalog';
import { hex, unhex } from './hex';
import { bytes, el, ms, paintWords, stageList } from './render';
import { channelName, type TabMessage, type TabReport } from './tabs-protocol';

type TabStage = 'connecting' | 'request' | 'setup' | 'online' | 'done';

const STAGES: readonly { id: TabStage; label: string }[] = [
  { id: 'connecting', label: 'Connecting' },
  { id: 'request', label: 'Request' },
  { id: 'setup', label: 'Setup' },
  { id: 'online', label: 'Online' },
  { id: 'done', label: 'Done' },
];

/** The classification client's participant id: after the three parties. */
const CLIENT = 3;

/** Bytes of the core's frame header (`core-rs/src/net/frame.rs`), before the ring words. */
const FRAME_HEADER = 28;

/** How long to wait for the relay and each message, and for the DataChannels to open. */
const TIMEOUT_MS = 15_000;
const RTC_TIMEOUT_MS = 10_000;

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const e = document.getElementById(id);
  if (!e) throw new Error(`the page has no #${id}`);
  return e as T;
};

const params = new URLSearchParams(location.search);
const room = params.get('room') ?? '';
const party = Number(params.get('party'));
/** This tab, among tabs opened for the same party. */
const tab = hex(crypto.getRandomValues(new Uint8Array(8)));
const since = performance.timeOrigin;

/** The ONNX files fetched so far: a tab serves the same model again without fetching it. */
const models = new Map<string, Promise<Uint8Array>>();

/** The session being served, and how to stop it. */
let current: { session: string; keys: (keys: readonly string[]) => void; stop: AbortController } | undefined;

function setStatus(state: 'waiting' | 'running' | 'done' | 'error' | 'replaced', pill: string, text: string): void {
  document.body.dataset.state = state;
  const p = $('status');
  p.textContent = pill;
  p.className = `pill ${state}`;
  $('status-text').textContent = text;
}

function showError(title: string, detail: string): void {
  $('error').replaceChildren(el('strong', undefined, title), el('span', undefined, detail));
  $('error').hidden = false;
}

function describe(e: unknown): string {
  if (e instanceof RingfenceError) return `${e.code}: ${e.message}`;
  return String(e instanceof Error ? e.message : e);
}

function renderLinks(via: (peer: number) => RtcLinkKind | undefined): void {
  const row = (who: string, how: string, kind: string) => {
    const li = el('li', kind, undefined, el('span', 'who', who), el('span', 'how', how));
    li.dataset.kind = kind;
    return li;
  };
  const words = { webrtc: 'WebRTC DataChannel, direct', relay: 'through the relay (Noise)' };
  $('links').replaceChildren(
    ...[0, 1, 2].filter((p) => p !== party).map((p) => {
      const kind = via(p);
      return row(`P${p}'s tab`, kind ? words[kind] : 'not connected', kind ?? 'none');
    }),
    row('The client (demo tab)', 'through the relay (Noise)', 'relay'),
  );
}

function renderBytes(sent: { setup?: number; online?: number; webrtc?: number; relay?: number }): void {
  const opt = (n: number | undefined) => (n === undefined ? '–' : bytes(n));
  const rows: [string, string, number | undefined][] = [
    ['Setup', 'weights and masks', sent.setup],
    ['Online', 'the inference on the hidden input', sent.online],
    ['Over DataChannels', 'to the other party tabs', sent.webrtc],
    ['Through the relay', 'to the client', sent.relay],
  ];
  $('bytes').replaceChildren(
    el(
      'tbody',
      undefined,
      undefined,
      ...rows.map(([name, note, n]) => el('tr', undefined, undefined, el('th', undefined, name, el('small', undefined, note)), el('td', undefined, opt(n)))),
    ),
  );
}

/**
 * `inner`, watched for the client's input: the first frame from the client once the online
 * stage started (the request comes before; the result goes the other way).
 */
function watchInput(inner: Transport, online: () => boolean): { transport: Transport; input: () => Uint8Array | undefined } {
  let input: Uint8Array | undefined;
  const transport: Transport = {
    send: (to, frame) => inner.send(to, frame),
    recv: async (from) => {
      const frame = await inner.recv(from);
      if (from === CLIENT && !input && online()) input = frame.slice(FRAME_HEADER);
      return frame;
    },
    close: () => inner.close?.(),
  };
  return { transport, input: () => input };
}

/** The bytes of `s`, hex from the demo tab. */
function bytesOf(s: string, what: string): Uint8Array {
  const bytes = unhex(s);
  if (!bytes) throw new Error(`the demo tab sent ${what} that is not hex: ${JSON.stringify(s)}`);
  return bytes;
}

function fetchModel(model: string): Promise<Uint8Array> {
  let file = models.get(model);
  if (!file) {
    file = fetch(modelUrl(model, party)).then(async (res) => {
      if (!res.ok) throw new Error(`cannot fetch the ${model} model file: HTTP ${res.status}`);
      return new Uint8Array(await res.arrayBuffer());
    });
    file.catch(() => models.delete(model));
    models.set(model, file);
  }
  return file;
}

/** One classification: keys, links, serving, and the report to the demo tab. */
async function serve(m: Extract<TabMessage, { t: 'join' }>, channel: BroadcastChannel): Promise<void> {
  current?.stop.abort(new Error('a newer classification started'));
  const stop = new AbortController();
  // The demo tab sends every key once all three tabs answered; a demo tab gone meanwhile never will.
  const keys = new Promise<readonly string[]>((resolve, reject) => {
    const late = setTimeout(() => reject(new Error(`the demo tab sent no keys within ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
    current = { session: m.session, keys: (k) => (clearTimeout(late), resolve(k)), stop };
    stop.signal.addEventListener('abort', () => (clearTimeout(late), reject(stop.signal.reason)), { once: true });
  });
  keys.catch(() => {}); // awaited below, unless something fails first
  const post = (msg: TabMessage) => channel.postMessage(msg);
  let reached: TabStage = 'connecting';
  const times: Partial<Record<TabStage, number>> = {};
  const stage = (s: TabStage) => stageList($('stages'), STAGES, (reached = s), times);
  $('error').hidden = true;
  stage('connecting');
  renderLinks(() => undefined);
  $('links-note').hidden = true;
  renderBytes({});
  let transport: RtcTransport | undefined;
  try {
    const info = modelInfo(m.model);
    const side = SETS[info.set].side;
    setStatus('running', 'working', `Serving ${info.label} to the demo tab…`);
    const onnx = fetchModel(m.model);
    const keypair = generateNoiseKeypair();
    post({ t: 'key', party, session: m.session, publicKey: hex(keypair.publicKey) });
    const publicKeys = (await keys).map((k) => bytesOf(k, 'a public key'));
    const sessionId = bytesOf(m.session, 'the session id');
    transport = await RtcTransport.connect({
      url: m.relay, token: m.token, sessionId, id: party, keypair, publicKeys, parties: 4,
      timeoutMs: TIMEOUT_MS, rtcTimeoutMs: RTC_TIMEOUT_MS,
      // Shown beside the links rather than logged: a fallback is a fact about the network.
      onWarning: (w) => {
        $('links-note').textContent = w;
        $('links-note').hidden = false;
      },
    });
    const t = transport;
    const peers = [0, 1, 2].filter((p) => p !== party);
    renderLinks((p) => t.via(p));
    let online = false;
    const watched = watchInput(transport, () => online);
    const onProgress = (e: ProgressEvent) => {
      // Join's `setup` is the parties agreeing their key: then the client's request is awaited.
      const s: TabStage = e.operation === 'join' ? (e.stage === 'setup' ? 'request' : 'connecting') : e.stage === 'setup' ? 'setup' : e.stage;
      online = s === 'online';
      if (s !== reached) stage(s);
    };
    const p = await Party.join({ id: party, sessionId, seeds: transport.seeds, transport: watched.transport, parties: 4, signal: stop.signal, onProgress });
    // P0's tab serves the ONNX file, the others the shape file; the demo shows the scores.
    const served = await p.serve({ models: { [m.model]: { model: await onnx, output: 'scores' } } });
    p.finish();
    if (served.outcome === 'refused') throw new RingfenceError('REFUSED', served.reason);
    const stats = transport.stats();
    const { stages, request } = served;
    Object.assign(times, { request: stages.request.ms, setup: stages.setup.ms, online: stages.online.ms });
    stage('done');
    renderBytes({ setup: stages.setup.bytesSent, online: stages.online.bytesSent, webrtc: stats.webrtc.bytesSent, relay: stats.relay.bytesSent });
    showView(watched.input(), side, request.backend);
    addServed(`${info.label} · ${request.backend === 'meteor' ? 'METEOR' : request.backend}`, stages, transport.kind);
    const report: TabReport = {
      stages,
      kind: transport.kind,
      via: peers.map((peer) => ({ peer, kind: t.via(peer) })),
      ...(transport.fallbackReason ? { fallbackReason: transport.fallbackReason } : {}),
      webrtcBytesSent: stats.webrtc.bytesSent,
    };
    post({ t: 'served', party, session: m.session, report });
    setStatus('done', 'ready', `Served ${info.label}. Waiting for the next classification.`);
  } catch (e) {
    const message = describe(e);
    // An abort comes from the demo tab, which knows why already.
    if (!stop.signal.aborted) post({ t: 'failed', party, session: m.session, message });
    stageList($('stages'), STAGES, reached, times, true);
    showError('This party stopped', message);
    setStatus('error', 'stopped', 'Waiting for the next classification.');
  } finally {
    transport?.close();
    if (current?.stop === stop) current = undefined;
  }
}

// A tab serves whatever family the client asked for, including ones the page does not offer.
function showView(words: Uint8Array | undefined, side: number, backend: string): void {
  const canvas = $<HTMLCanvasElement>('view');
  const n = side * side;
  if (!words || words.byteLength < n * 8) {
    $('view-caption').textContent = 'The input frame was not seen.';
    return;
  }
  // A copy, so that the words start on an 8-byte boundary.
  paintWords(canvas, new BigUint64Array(words.slice(0, n * 8).buffer), side);
  canvas.dataset.side = String(side);
  $('view-caption').textContent =
    backend === 'meteor'
      ? `The masked input m = x − ψ, ${side}×${side}: without the part of ψ this tab lacks, it is uniformly random.`
      : `This tab's share of the input, ${side}×${side}: one of three random numbers that add up to each pixel.`;
}

function addServed(what: string, stages: ServeStages, kind: RtcTransport['kind']): void {
  const list = $('served');
  list.querySelector('.note')?.remove();
  const total = stages.request.ms + stages.setup.ms + stages.online.ms;
  const li = el('li', undefined, undefined, el('b', undefined, what), el('span', undefined, `${ms(total)} · ${bytes(stages.setup.bytesSent + stages.online.bytesSent)} sent · links: ${kind}`));
  list.prepend(li);
  // The latest few are enough to see that the tab keeps serving.
  while (list.children.length > 5) list.lastElementChild?.remove();
}

function start(): void {
  if (!/^[0-9a-f]{16}$/.test(room) || ![0, 1, 2].includes(party)) {
    showError('This page is one party of the demo', 'Open it from the demo page: choose “Three tabs (WebRTC)” and classify.');
    const back = el('a', 'button-link', 'Open the demo');
    back.setAttribute('href', './');
    $('error').append(back);
    setStatus('error', 'not joined', 'No demo tab to serve.');
    return;
  }
  document.title = `P${party} · ringfence party tab`;
  $('role-id').textContent = `P${party}`;
  $('role-title').textContent = `Party P${party}: ${ROLES[party]}`;
  $('role-blurb').textContent =
    party === 0
      ? 'The model owner: it hands the other two tabs the weights as random-looking pieces, and computes on pieces of the input.'
      : 'It computes on pieces of the weights and of the input, and never sees either.';
  stageList($('stages'), STAGES, undefined);
  renderLinks(() => undefined);
  renderBytes({});
  setStatus('waiting', 'loading', 'Loading WebAssembly…');

  init()
    .then((sdk) => {
      $('runtime').textContent = sdk.module === 'simd' ? 'WebAssembly · SIMD' : 'WebAssembly (no SIMD)';
      const channel = new BroadcastChannel(channelName(room));
      const here = () => channel.postMessage({ t: 'here', party, tab, since } satisfies TabMessage);
      channel.onmessage = (e: MessageEvent<TabMessage>) => {
        const m = e.data;
        if (m.t === 'roll-call') here();
        else if (m.t === 'here' && m.party === party && m.tab !== tab && m.since > since) {
          // A newer tab was opened for this party: it serves from now on.
          channel.close();
          current?.stop.abort(new Error('another tab took over'));
          setStatus('replaced', 'replaced', `Another tab took over P${party}. You can close this one.`);
        } else if (m.t === 'join' && m.tab === tab) void serve(m, channel);
        else if (m.t === 'keys' && m.session === current?.session) current.keys(m.publicKeys);
        else if (m.t === 'abort' && m.session === current?.session) current.stop.abort(new Error(`the demo tab stopped: ${m.reason}`));
      };
      addEventListener('pagehide', () => channel.postMessage({ t: 'bye', party, tab } satisfies TabMessage));
      here();
      setStatus('waiting', 'ready', 'Waiting for the demo tab to classify.');
    })
    .catch((e: unknown) => {
      showError('This browser could not start the party', describe(e));
      setStatus('error', 'failed', 'The party cannot run here.');
    });
}

start();
