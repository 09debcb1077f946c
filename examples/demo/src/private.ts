// One private classification, start to end, with the SDK: a fresh client identity, a session
// from the deployment for that identity, the classification, and the figures to show. In the
// "browser as one party" deployment this tab also serves the model as party P2; in the "three
// tabs" deployment the party tabs serve it (tabs.ts), and report their figures.
import {
  Client, Party, RingfenceError, SecureRelayTransport, generateNoiseKeypair,
  type Classification, type ClientStage, type NoiseKeypair, type ServeStages,
} from 'ringfence';
import { ApiError, getReport, openSession, openTabsSession, type PartyFigures, type SessionInfo } from './api';
import { PAGE_PARTY, modelUrl, type Backend, type DeploymentKind, type Output } from './catalog';
import { hex, unhex as parseHex } from './hex';
import { TabsError, type PartyTabs } from './tabs';
import type { TabReport } from './tabs-protocol';

export interface PrivateRun {
  readonly result: Classification;
  /** From the click ({@link RunOptions.startedAt}) to the links being up, in milliseconds. */
  readonly connectMs: number;
  /** Bytes this tab sent and received as the client during each stage. */
  readonly client: Readonly<Record<'setup' | 'online', { sent: number; received: number }>>;
  /**
   * The native server parties' own figures, when the deployment reports them: they come after
   * the answer (the servers log them once they answered), so the answer does not wait for them.
   */
  readonly parties: Promise<readonly PartyFigures[] | undefined>;
  /** This tab's figures as party {@link PAGE_PARTY}, when it was one. */
  readonly pageParty: ServeStages | undefined;
  /** The party tabs' reports, by party, when they were the parties. */
  readonly tabs: readonly TabReport[] | undefined;
  /** Which of the relay's front ends this tab's client reached. */
  readonly relayTransport: Client['transport'];
  /**
   * Why this tab is not on WebTransport: the deployment offers none (`undefined` then), or the
   * SDK's reason for falling back to the WebSocket.
   */
  readonly webTransportError: string | undefined;
  /** Whether the deployment offered the relay's WebTransport front end. */
  readonly webTransportOffered: boolean;
}

export interface RunOptions {
  readonly model: string;
  readonly backend: Backend;
  readonly output: Output;
  readonly deployment: DeploymentKind;
  /** The model's input, scaled as it was trained on. */
  readonly input: Float32Array;
  /** When the user asked, on this page's clock (`performance.now()`): the times count from it. */
  readonly startedAt: number;
  /** Called as each stage starts. */
  readonly onStage: (stage: ClientStage) => void;
  /** Called with what is going on before the client connects, when that takes a while (the party tabs). */
  readonly onStep?: (step: string) => void;
  /** The party tabs, for the "three tabs" deployment. */
  readonly tabs?: PartyTabs;
}

/** How long to wait for the relay, and for each message of a party. */
const TIMEOUT_MS = 15_000;

/** How long the party tabs may take to open: the user may be opening them by hand. */
const OPEN_TABS_MS = 120_000;

export async function classifyPrivately(o: RunOptions): Promise<PrivateRun> {
  o.onStage('connecting');
  if (o.deployment === 'tabs') {
    if (!o.tabs) throw new TabsError('the party tabs are not set up');
    return classifyInTabs(o, o.tabs);
  }
  const asParty = o.deployment === 'browser-party';
  // Fetched before the session opens: its parties wait for this tab only so long.
  const modelFile = asParty ? await fetchModel(o.model) : undefined;
  // Fresh identities per classification. Private keys never leave this tab; the parties
  // learn the public keys from the deployment, to authenticate this tab's links (Noise KK).
  const keypair = generateNoiseKeypair();
  const partyKeypair = asParty ? generateNoiseKeypair() : undefined;
  const session = await openSession(o.model, hex(keypair.publicKey), partyKeypair && { id: PAGE_PARTY, publicKey: hex(partyKeypair.publicKey) });

  // Should either half fail, the other stops at once rather than at its timeout.
  const failed = new AbortController();
  const halves = Promise.all([
    runClient(o, session, keypair, failed.signal),
    partyKeypair && modelFile ? serveFromPage(o.model, modelFile, session, partyKeypair, keypair.publicKey, failed.signal) : undefined,
  ]);
  halves.catch((e: unknown) => failed.abort(e));
  const [client, pageParty] = await halves;
  // The figures are a nicety: a deployment that gives none (or fails to) still shows the answer.
  const parties = getReport(session.session).catch(() => undefined);
  return { ...client, parties, pageParty, tabs: undefined };
}

/**
 * The three party tabs serve; this tab is the client. The tabs make their keys and tell this
 * tab the public halves; the deployment gives only the relay and the join tokens.
 */
async function classifyInTabs(o: RunOptions, tabs: PartyTabs): Promise<PrivateRun> {
  if (!tabs.allOpen) o.onStep?.('Step 1 of 3: opening the three party tabs…');
  await tabs.whenAllOpen(OPEN_TABS_MS);
  o.onStep?.('Step 2 of 3: the party tabs make fresh keys…');
  const keypair = generateNoiseKeypair();
  const session = await openTabsSession(o.model);
  const failed = new AbortController();
  const { parties, served } = await tabs.start(session, o.model, keypair.publicKey, failed.signal);
  o.onStep?.('Step 3 of 3: the parties link up over WebRTC and this tab connects through the relay…');
  const info: SessionInfo = {
    relay: session.relay,
    session: session.session,
    parties: parties.map(hex),
    token: session.tokens[3],
    ...(session.webTransport ? { webTransport: session.webTransport } : {}),
  };
  const halves = Promise.all([runClient(o, info, keypair, failed.signal), served]);
  halves.catch((e: unknown) => failed.abort(e));
  const [client, reports] = await halves;
  return { ...client, parties: Promise.resolve(undefined), pageParty: undefined, tabs: reports };
}

/** The client's half: connect, classify, and the bytes of each stage and how it reached the relay. */
async function runClient(o: RunOptions, session: SessionInfo, keypair: NoiseKeypair, signal: AbortSignal) {
  const counters = new Map<ClientStage, { sent: number; received: number }>();
  const client = await Client.connect({
    relay: session.relay,
    session: unhex(session.session),
    parties: session.parties.map(unhex),
    keypair,
    ...(session.deployment ? { deployment: session.deployment } : {}),
    ...(session.token ? { token: session.token } : {}),
    // Where the relay has a WebTransport front end, the SDK tries it first (and says why not).
    ...(session.webTransport ? { webTransport: session.webTransport } : {}),
    timeoutMs: TIMEOUT_MS,
    signal,
    onProgress: (e) => {
      counters.set(e.stage, { sent: e.bytesSent, received: e.bytesReceived });
      if (e.stage !== 'connecting') o.onStage(e.stage);
    },
  });
  const connectMs = performance.now() - o.startedAt;
  const { transport: relayTransport, webTransportError } = client;
  let result: Classification;
  try {
    result = await client.classify(o.model, o.input, { backend: o.backend, output: o.output });
  } finally {
    client.close();
  }
  const during = (from: ClientStage, to: ClientStage) => {
    const a = counters.get(from) ?? { sent: 0, received: 0 };
    const b = counters.get(to) ?? a;
    return { sent: b.sent - a.sent, received: b.received - a.received };
  };
  return {
    result,
    connectMs,
    relayTransport,
    webTransportError,
    webTransportOffered: !!session.webTransport,
    client: { setup: during('setup', 'online'), online: during('online', 'done') },
  };
}

/**
 * This tab as party {@link PAGE_PARTY}: joins the session beside the two native parties and
 * serves the client (this tab's other half) one request.
 */
async function serveFromPage(
  model: string,
  modelFile: Uint8Array,
  session: SessionInfo,
  keypair: NoiseKeypair,
  clientPublicKey: Uint8Array,
  signal: AbortSignal,
): Promise<ServeStages> {
  const sessionId = unhex(session.session);
  const transport = await SecureRelayTransport.connect({
    url: session.relay,
    sessionId,
    id: PAGE_PARTY,
    keypair,
    publicKeys: [...session.parties.map(unhex), clientPublicKey],
    parties: 4,
    timeoutMs: TIMEOUT_MS,
  });
  try {
    const party = await Party.join({ id: PAGE_PARTY, sessionId, seeds: transport.seeds, transport, parties: 4, signal });
    // The deployment serves the scores (the page shows them); this tab holds only the shape.
    const served = await party.serve({ models: { [model]: { model: modelFile, output: 'scores' } } });
    party.finish();
    if (served.outcome === 'refused') throw new RingfenceError('REFUSED', served.reason);
    return served.stages;
  } finally {
    transport.close();
  }
}

async function fetchModel(model: string): Promise<Uint8Array> {
  let res: Response;
  try {
    res = await fetch(modelUrl(model, PAGE_PARTY));
  } catch (e) {
    throw new ApiError(`cannot fetch the ${model} model file: ${String(e instanceof Error ? e.message : e)}`, { cause: e });
  }
  if (!res.ok) throw new ApiError(`cannot fetch the ${model} model file: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** Restarting the demo, in the words of the next step of most errors. */
const RESTART = 'check that “npm run demo” is still running in its terminal (it runs the relay and the servers on 127.0.0.1; its log says why they stopped), restart it if not, then reload this page and classify again';

/**
 * What went wrong, in words for the page: a title, the detail, and `next`: what the user can
 * check or do about it.
 */
export function describeError(e: unknown): { title: string; detail: string; next: string } {
  if (e instanceof ApiError) {
    const next =
      e.status === 503
        ? 'wait a few seconds for the running classifications to end, then classify again.'
        : e.status === undefined || e.status >= 500
          ? `${RESTART}.`
          : 'reload this page (it may be older than the demo server) and classify again.';
    return { title: 'The demo server could not open a session', detail: e.message, next };
  }
  if (e instanceof TabsError) {
    return e.party === undefined
      ? {
          title: 'The party tabs are not ready',
          detail: e.message,
          next: 'allow pop-ups for this page or open each party with its Open link under “Party tabs”, keep the three windows open, then classify again.',
        }
      : {
          title: `The tab of party P${e.party} stopped`,
          detail: e.message,
          next: `look at P${e.party}'s window for its own message, then classify again (a closed party tab is opened again).`,
        };
  }
  if (e instanceof RingfenceError) {
    const who = e.peer === undefined ? '' : ` (server P${e.peer})`;
    const known: Partial<Record<RingfenceError['code'], { title: string; next: string }>> = {
      TRANSPORT:
        e.peer === undefined
          ? { title: 'Could not reach the relay', next: `${RESTART}.` }
          : { title: `Lost the link to server P${e.peer}`, next: `the server may have stopped: ${RESTART}.` },
      TIMEOUT: { title: `A server party did not answer in time${who}`, next: `classify again (the machine may have been busy); if it fails again, ${RESTART}.` },
      REFUSED: { title: 'The servers declined the request', next: 'the detail says why: choose another model or protocol and classify again.' },
      PEER_MISBEHAVED: {
        title: `A server party broke the protocol${who}`,
        next: 'a party may run another build of ringfence: rebuild and restart the demo (“npm run demo” builds what changed), then classify again.',
      },
      WASM_LOAD: { title: 'This browser could not load the WebAssembly module', next: 'use a current Chrome, Edge, Firefox or Safari with WebAssembly allowed, then reload this page.' },
      ABORTED: { title: 'The classification was cancelled', next: 'classify again.' },
    };
    const k = known[e.code] ?? { title: `The classification failed (${e.code})`, next: `classify again; if it fails again, ${RESTART}.` };
    return { title: k.title, detail: `${e.code}: ${e.message}`, next: k.next };
  }
  return { title: 'Something went wrong', detail: String(e instanceof Error ? e.message : e), next: `reload this page and classify again; if it fails again, ${RESTART}.` };
}

function unhex(s: string): Uint8Array {
  const bytes = parseHex(s);
  if (!bytes) throw new ApiError(`the demo server sent ${JSON.stringify(s)} where hex bytes belong`);
  return bytes;
}
