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
  /** From asking for a session to the links being up, in milliseconds. */
  readonly connectMs: number;
  /** Bytes this tab sent and received as the client during each stage. */
  readonly client: Readonly<Record<'setup' | 'online', { sent: number; received: number }>>;
  /** The native server parties' own figures, when the deployment reports them. */
  readonly parties: readonly PartyFigures[] | undefined;
  /** This tab's figures as party {@link PAGE_PARTY}, when it was one. */
  readonly pageParty: ServeStages | undefined;
  /** The party tabs' reports, by party, when they were the parties. */
  readonly tabs: readonly TabReport[] | undefined;
  /** Which of the relay's front ends this tab's client reached. */
  readonly relayTransport: Client['transport'];
}

export interface RunOptions {
  readonly model: string;
  readonly backend: Backend;
  readonly output: Output;
  readonly deployment: DeploymentKind;
  /** The model's input, scaled as it was trained on. */
  readonly input: Float32Array;
  /** Called as each stage starts. */
  readonly onStage: (stage: ClientStage) => void;
  /** The party tabs, for the "three tabs" deployment. */
  readonly tabs?: PartyTabs;
}

/** How long to wait for the relay, and for each message of a party. */
const TIMEOUT_MS = 15_000;

/** How long the party tabs may take to open: the user may be opening them by hand. */
const OPEN_TABS_MS = 120_000;

export async function classifyPrivately(o: RunOptions): Promise<PrivateRun> {
  const t0 = performance.now();
  o.onStage('connecting');
  if (o.deployment === 'tabs') {
    if (!o.tabs) throw new TabsError('the party tabs are not set up');
    return classifyInTabs(o, o.tabs, t0);
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
    runClient(o, session, keypair, failed.signal).then((r) => ({ ...r, connectMs: r.connectedAt - t0 })),
    partyKeypair && modelFile ? serveFromPage(o.model, modelFile, session, partyKeypair, keypair.publicKey, failed.signal) : undefined,
  ]);
  halves.catch((e: unknown) => failed.abort(e));
  const [client, pageParty] = await halves;
  // The figures are a nicety: a deployment that gives none (or fails to) still shows the answer.
  const parties = await getReport(session.session).catch(() => undefined);
  return { result: client.result, connectMs: client.connectMs, client: client.bytes, parties, pageParty, tabs: undefined, relayTransport: client.transport };
}

/**
 * The three party tabs serve; this tab is the client. The tabs make their keys and tell this
 * tab the public halves; the deployment gives only the relay and the join tokens.
 */
async function classifyInTabs(o: RunOptions, tabs: PartyTabs, t0: number): Promise<PrivateRun> {
  await tabs.whenAllOpen(OPEN_TABS_MS);
  const keypair = generateNoiseKeypair();
  const session = await openTabsSession(o.model);
  const failed = new AbortController();
  const { parties, served } = await tabs.start(session, o.model, keypair.publicKey, failed.signal);
  const info: SessionInfo = { relay: session.relay, session: session.session, parties: parties.map(hex), token: session.tokens[3] };
  const halves = Promise.all([runClient(o, info, keypair, failed.signal), served]);
  halves.catch((e: unknown) => failed.abort(e));
  const [client, reports] = await halves;
  return {
    result: client.result,
    connectMs: client.connectedAt - t0,
    client: client.bytes,
    parties: undefined,
    pageParty: undefined,
    tabs: reports,
    relayTransport: client.transport,
  };
}

/** The client's half: connect, classify, and the bytes of each stage. */
async function runClient(o: RunOptions, session: SessionInfo, keypair: NoiseKeypair, signal: AbortSignal) {
  const counters = new Map<ClientStage, { sent: number; received: number }>();
  const client = await Client.connect({
    relay: session.relay,
    session: unhex(session.session),
    parties: session.parties.map(unhex),
    keypair,
    ...(session.deployment ? { deployment: session.deployment } : {}),
    ...(session.token ? { token: session.token } : {}),
    timeoutMs: TIMEOUT_MS,
    signal,
    onProgress: (e) => {
      counters.set(e.stage, { sent: e.bytesSent, received: e.bytesReceived });
      if (e.stage !== 'connecting') o.onStage(e.stage);
    },
  });
  const connectedAt = performance.now();
  const transport = client.transport;
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
  return { result, connectedAt, transport, bytes: { setup: during('setup', 'online'), online: during('online', 'done') } };
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

/** What went wrong, in words for the page: a title and the detail. */
export function describeError(e: unknown): { title: string; detail: string } {
  if (e instanceof ApiError) return { title: 'The demo server could not open a session', detail: e.message };
  if (e instanceof TabsError) {
    return { title: e.party === undefined ? 'The party tabs are not ready' : `The tab of party P${e.party} stopped`, detail: e.message };
  }
  if (e instanceof RingfenceError) {
    const who = e.peer === undefined ? '' : ` (server P${e.peer})`;
    const titles: Partial<Record<RingfenceError['code'], string>> = {
      TRANSPORT: e.peer === undefined ? 'Could not reach the relay' : `Lost the link to server P${e.peer}`,
      TIMEOUT: `A server party did not answer in time${who}`,
      REFUSED: 'The servers declined the request',
      PEER_MISBEHAVED: `A server party broke the protocol${who}`,
      WASM_LOAD: 'This browser could not load the WebAssembly module',
      ABORTED: 'The classification was cancelled',
    };
    return { title: titles[e.code] ?? `The classification failed (${e.code})`, detail: `${e.code}: ${e.message}` };
  }
  return { title: 'Something went wrong', detail: String(e instanceof Error ? e.message : e) };
}

function unhex(s: string): Uint8Array {
  const bytes = parseHex(s);
  if (!bytes) throw new ApiError(`the demo server sent ${JSON.stringify(s)} where hex bytes belong`);
  return bytes;
}
