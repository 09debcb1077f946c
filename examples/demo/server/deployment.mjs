// The demo server's one point of contact with a ringfence deployment: everything that knows how
// the three compute parties and the relay are run lives here, behind `openSession`, so that
// another deployment (long-running parties behind a relay lobby) replaces this file alone.
//
// "3 servers": one long-running local deployment (`ringfence local-deployment`, started with
// the first request): a relay that admits signed tokens only and three `ringfence party`
// servers in its lobby, linked to each other by a mesh that makes METEOR setup runs ahead of
// demand. A session is a fresh id and a token for it; the page's client invites the servers
// through the relay, which hands them its public key. The servers' events tell how each
// session went (its setup taken from the mesh's shelf, or made in the session) and how full
// the shelves are (`serversState`).
//
// "Three tabs": the three parties are browser tabs that link to each other over WebRTC; they
// need only the same relay, with a join token each for a fresh session (and the client one).
//
// "Browser as one party": the page is P2, so the two native parties must know its key before
// the session; they are per-session processes (`ringfence session-party`, through
// web/examples/local-deployment.mjs's startDeployment), stopped once the classification settled.
import { existsSync } from 'node:fs';
import { generateNoiseKeypair, init, randomSessionId } from 'ringfence';
import { modelPath, startDeployment, startLocalDeployment } from '../../../web/examples/local-deployment.mjs';

/** How long a served session's figures are waited for. */
const REPORT_WAIT_MS = 30_000;

/** How long `serversState({ ready })` waits for the mesh to make a run of the model. */
const PREPARED_WAIT_MS = 60_000;

let servers;

/** The long-running deployment, started once; stopped when `signal` aborts. */
function longRunning(signal) {
  if (!servers) {
    servers = startLocalDeployment();
    signal?.addEventListener('abort', () => servers.then((d) => d.stop(), () => {}), { once: true });
    servers.catch(() => (servers = undefined));
  }
  return servers;
}

/**
 * A session of the long-running deployment for the page's client, whose Noise public key is
 * `clientPublicKey` (hex): `{ relay, webTransport, session, parties, deployment, token, report }`,
 * the token bound to that key (the servers refuse the session for any other), `report`
 * settling with the three parties' figures once each logged how the session ended.
 */
async function serversSession(clientPublicKey, signal) {
  const d = await longRunning(signal);
  const id = randomSessionId();
  const session = toHex(id);
  const token = d.token(id, 3, Buffer.from(clientPublicKey, 'hex'));
  const ended = new Map();
  let stop;
  const report = new Promise((resolve) => {
    const timer = setTimeout(() => done(), REPORT_WAIT_MS);
    const done = () => {
      clearTimeout(timer);
      stop();
      resolve([0, 1, 2].map((id) => eventFigures(id, ended.get(id))));
    };
    stop = d.onEvent((e) => {
      if (e.session !== session.slice(0, 8) || !['answered', 'refused', 'session_failed'].includes(e.event)) return;
      // What making a run of this model costs this party, when the mesh made its setup.
      const made = e.stocked ? d.shelf().models[e.model]?.[e.backend]?.[e.party] : undefined;
      ended.set(e.party, { ...e, made });
      if (ended.size === 3) done();
    });
  });
  // `webTransport` (the relay's HTTP/3 front end and its self-signed certificate's hash): the
  // page's client tries it first, and falls back to the WebSocket at `relay`.
  return { relay: d.relay, webTransport: d.webTransport, session, parties: d.publicKeys.map(toHex), deployment: d.deployment, token, report };
}

/**
 * A session of the long-running deployment's relay whose parties are browser tabs: `{ relay,
 * webTransport, session, tokens }`, a token for each of participants 0, 1, 2 (the tabs) and 3 (the client).
 * The tabs make their keys themselves and never tell this server.
 */
async function tabsSession(signal) {
  const d = await longRunning(signal);
  const session = randomSessionId();
  return { relay: d.relay, webTransport: d.webTransport, session: toHex(session), tokens: [0, 1, 2, 3].map((party) => d.token(session, party)) };
}

/**
 * The long-running servers' mesh, as their latest events tell it: `{ mesh, models }`, `mesh`
 * being `'up'` (all three linked), `'down'` (one of them reported its mesh down: sessions make
 * their own setup meanwhile) or `'starting'`, and `models` one `{ model, ready, target }` per
 * model the mesh makes, `ready` the runs of it ready at the three (the least of their counts).
 * With `ready: MODEL`, first waits until a run of MODEL is ready at all three (60 s at most:
 * then rejects with status 504).
 */
export async function serversState({ ready, backend = 'meteor', signal } = {}) {
  if (ready !== undefined && !(typeof ready === 'string' && /^[a-z0-9-]+$/.test(ready))) {
    throw refusal(400, 'ready must be a model name');
  }
  if (!['meteor', 'rep3'].includes(backend)) throw refusal(400, 'backend must be meteor or rep3');
  if (signal?.aborted) throw refusal(503, 'the demo server is shutting down');
  const d = await longRunning(signal);
  if (ready) {
    await d.waitPrepared(ready, { backend, timeoutMs: PREPARED_WAIT_MS, signal }).catch((e) => {
      throw signal?.aborted ? refusal(503, 'the demo server is shutting down') : refusal(504, e.message);
    });
  }
  const { mesh, models } = d.shelf();
  return {
    mesh: mesh.some((m) => m && !m.up) ? 'down' : mesh.every((m) => m?.up) ? 'up' : 'starting',
    models: Object.entries(models).flatMap(([model, backends]) =>
      Object.entries(backends).map(([backend, parties]) => ({
        model,
        backend,
        ready: Math.min(...parties.map((p) => p?.ready ?? 0)),
        target: Math.max(...parties.map((p) => p?.target ?? 0)),
      })),
    ),
  };
}

/** A server party's log event of a session, in the units the page shows. */
function eventFigures(id, e) {
  if (!e) return { id, ok: false, message: 'no report from this party' };
  return {
    id,
    ok: e.event === 'answered',
    message: e.reason ?? e.error ?? '',
    setupBytes: e.setup_bytes,
    onlineBytes: e.online_bytes,
    setupMs: e.setup_seconds === undefined ? undefined : e.setup_seconds * 1000,
    onlineMs: e.online_seconds === undefined ? undefined : e.online_seconds * 1000,
    rounds: e.online_rounds,
    stocked: e.stocked,
    // Not this run's own figures (it was made before the session), but those of the mesh's
    // latest run of the model at this party: every run of a model costs the same.
    madeAhead: e.made && { ms: e.made.seconds * 1000, bytes: e.made.bytes },
  };
}

/**
 * "Browser as one party" sessions running at once. Each one is three processes; past this the
 * demo answers 503 rather than letting a reloading page fill the machine with them.
 */
const MAX_SESSIONS = 4;

let running = 0;
let sdkReady;

const toHex = (bytes) => Buffer.from(bytes).toString('hex');

/**
 * An error `openSession` rejects with, `status` being the HTTP status the API answers with.
 */
function refusal(status, message) {
  return Object.assign(new Error(message), { status });
}

/**
 * Opens a classification session of `model` for the client whose Noise public key is
 * `clientPublicKey` (64 hex digits): the parties will accept that client's links and serve
 * it one classification. With `pageParty: { id, publicKey }`, party `id` is not started here:
 * the page joins as that party itself, with that key.
 *
 * Resolves with what the browser needs for `Client.connect`: `{ relay, session, parties }`
 * (the relay's URL, the 16-byte session id and the three parties' public keys, in hex; and
 * with the long-running servers, `deployment` and the session's `token`), plus
 * `report`, a promise of the parties' own figures, settled once the session's processes have
 * exited (one `{ id, ok, message, setupBytes, onlineBytes, setupMs, onlineMs, rounds, stocked,
 * madeAhead }` per party started here, figures `undefined` where a party did not report them;
 * `stocked`: the session's setup was a run the long-running servers' mesh made ahead of
 * demand, what making such a run costs that party being `madeAhead: { ms, bytes }`), or no `report`
 * from a deployment that does not report. Rejects with an Error whose `status` is 400 (bad
 * request, or a `pageParty` the deployment cannot take) or 503 (busy, shutting down); any
 * other error means the deployment failed. Aborting `signal` (server shutdown) stops the
 * session's processes.
 *
 * With `tabs: true` instead of keys, the three parties are browser tabs: resolves with `{
 * relay, session, tokens }` (see {@link tabsSession}) and no report.
 */
export async function openSession({ model, clientPublicKey, pageParty, tabs, signal }) {
  if (typeof model !== 'string' || !/^[a-z0-9-]+$/.test(model) || !existsSync(modelPath(model))) {
    throw refusal(400, `no shipped model named ${JSON.stringify(model)}`);
  }
  if (tabs !== undefined && tabs !== true) throw refusal(400, 'tabs must be true when given');
  if (signal?.aborted) throw refusal(503, 'the demo server is shutting down');
  if (tabs) return tabsSession(signal);
  const isKey = (k) => typeof k === 'string' && /^[0-9a-f]{64}$/i.test(k);
  if (!isKey(clientPublicKey)) throw refusal(400, 'clientPublicKey must be 64 hex digits (a 32-byte Noise public key)');
  if (pageParty !== undefined && !([0, 1, 2].includes(pageParty?.id) && isKey(pageParty?.publicKey))) {
    throw refusal(400, 'pageParty must be { id: 0, 1 or 2, publicKey: 64 hex digits }');
  }
  if (!pageParty) return serversSession(clientPublicKey, signal);
  if (running >= MAX_SESSIONS) {
    throw refusal(503, `${MAX_SESSIONS} classifications are already running: try again in a few seconds`);
  }
  running++;
  let deployment;
  try {
    // The local deployment makes the parties' keys with the SDK.
    await (sdkReady ??= init());
    const session = randomSessionId();
    const keypairs = [0, 1, 2].map(() => generateNoiseKeypair());
    // The page's party holds its private key; the processes need only its public key.
    if (pageParty) keypairs[pageParty.id] = { publicKey: Buffer.from(pageParty.publicKey, 'hex') };
    deployment = await startDeployment({
      model,
      session,
      client: Buffer.from(clientPublicKey, 'hex'),
      keypairs,
      ids: [0, 1, 2].filter((id) => id !== pageParty?.id),
    });
    // Shut down while the processes started: stop them (below) rather than hand them out.
    if (signal?.aborted) throw refusal(503, 'the demo server is shutting down');
    const stop = () => deployment.stop();
    signal?.addEventListener('abort', stop, { once: true });
    const outcomes = deployment.done.finally(async () => {
      signal?.removeEventListener('abort', stop);
      await stop();
      running--;
    });
    return {
      relay: deployment.relay,
      session: toHex(session),
      parties: deployment.publicKeys.map(toHex),
      report: outcomes.then((all) => all.map(figures)),
    };
  } catch (e) {
    running--;
    await deployment?.stop();
    throw e;
  }
}

/** One party's outcome, in the units the page shows. */
function figures({ id, ok, message, report }) {
  return {
    id,
    ok,
    message,
    setupBytes: report?.setup_bytes,
    onlineBytes: report?.online_bytes,
    setupMs: report && report.setup_seconds * 1000,
    onlineMs: report && report.online_seconds * 1000,
    rounds: report?.online_rounds,
  };
}
