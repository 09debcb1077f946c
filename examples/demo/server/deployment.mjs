// The demo server's one point of contact with a ringfence deployment: everything that knows how
// the three compute parties and the relay are run lives here, behind `openSession`, so that
// another deployment (long-running parties behind a relay lobby) replaces this file alone.
//
// Today every classification gets its own local deployment (examples/local-deployment.mjs in
// the SDK): a `ringfence relay` and three native party processes on 127.0.0.1 (two when the
// page is the third party), started for the client's public key and stopped once the
// classification settled.
import { existsSync } from 'node:fs';
import { generateNoiseKeypair, init, randomSessionId } from 'ringfence';
import { modelPath, startDeployment } from '../../../web/examples/local-deployment.mjs';

/**
 * Sessions running at once. Each one is four processes; past this the demo answers 503 rather
 * than letting a reloading page fill the machine with them.
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
 * (the relay's URL, the 16-byte session id and the three parties' public keys, in hex), plus
 * `report`, a promise of the parties' own figures, settled once the session's processes have
 * exited (one `{ id, ok, message, setupBytes, onlineBytes, setupMs, onlineMs, rounds }` per
 * party started here, figures `undefined` where a party did not report them), or no `report`
 * from a deployment that does not report. Rejects with an Error whose `status` is 400 (bad
 * request, or a `pageParty` the deployment cannot take) or 503 (busy, shutting down); any
 * other error means the deployment failed. Aborting `signal` (server shutdown) stops the
 * session's processes.
 */
export async function openSession({ model, clientPublicKey, pageParty, signal }) {
  if (typeof model !== 'string' || !/^[a-z0-9-]+$/.test(model) || !existsSync(modelPath(model))) {
    throw refusal(400, `no shipped model named ${JSON.stringify(model)}`);
  }
  const isKey = (k) => typeof k === 'string' && /^[0-9a-f]{64}$/i.test(k);
  if (!isKey(clientPublicKey)) throw refusal(400, 'clientPublicKey must be 64 hex digits (a 32-byte Noise public key)');
  if (pageParty !== undefined && !([0, 1, 2].includes(pageParty?.id) && isKey(pageParty?.publicKey))) {
    throw refusal(400, 'pageParty must be { id: 0, 1 or 2, publicKey: 64 hex digits }');
  }
  if (signal?.aborted) throw refusal(503, 'the demo server is shutting down');
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
