// A local deployment for trying the SDK's `Client` (and for its tests): the native relay and
// native compute parties serving a shipped model (all three, or the ones a test does not run
// itself with the SDK's `Party.serve`), all processes of the `ringfence` binary
// (`npm run demo` builds it, or `cargo build --release -p ringfence-relay --bin ringfence`;
// RINGFENCE_BIN overrides where it is looked for). Not part of the npm package.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Party, SecureRelayTransport, generateNoiseKeypair, init } from 'ringfence';
import { findBinary } from '../../scripts/lib/common.mjs';

const toHex = (b) => Buffer.from(b).toString('hex');

/**
 * Starts a relay and three parties serving `models/NAME.onnx` (under `NAME`) to the client
 * whose public key is `client`, for one classification in `session`. Returns `{ relay,
 * publicKeys, done, stop }`: the relay's URL and the parties' public keys for
 * `Client.connect`, `done` (see {@link serveModel}), and `stop()`, which ends everything.
 * `ids` picks the native parties to start (the caller runs the others, with `keypairs`, the
 * three parties' keypairs it may pass in). Requires `await init()` (keys are made with the SDK).
 */
export async function startDeployment({ model, session, client, ids = [0, 1, 2], keypairs = [0, 1, 2].map(() => generateNoiseKeypair()) }) {
  const relay = await startRelay();
  const path = modelPath(model);
  const parties = serveModel({ relayUrl: relay.url, model: path, sessionId: session, keypairs, clientPublicKey: client, ids });
  return {
    relay: relay.url,
    publicKeys: keypairs.map((k) => k.publicKey),
    done: parties.done,
    stop: async () => {
      await parties.stop();
      await relay.stop();
    },
  };
}

const MODELS = new URL('../../models/', import.meta.url);

/** Path of the shipped model `models/NAME.onnx`. */
export const modelPath = (name) => fileURLToPath(new URL(`${name}.onnx`, MODELS));

/**
 * Held-out test sample `k` of the shipped model `name`, as its reference file
 * (`models/data/NAME.reference.json`) describes it: `{ input, expected, runtime }`, the input
 * scaled as the model takes it, and the class the reference runtime (onnxruntime) gives it.
 */
export function referenceSample(name, k) {
  const ref = JSON.parse(readFileSync(new URL(`data/${name}.reference.json`, MODELS), 'utf8'));
  // Paths in the reference file are relative to the repository.
  const all = readFileSync(new URL(`../${ref.inputs}`, MODELS));
  const len = all.length / ref.argmax.length;
  const scale = { '1/255': 1 / 255, 1: 1 }[ref.input_scale];
  if (!Number.isInteger(len) || scale === undefined || !(k >= 0 && k < ref.argmax.length)) {
    throw new Error(`${name}: no sample ${k} (${ref.argmax.length} samples of ${len} values, input_scale ${ref.input_scale})`);
  }
  const input = Float32Array.from(all.subarray(k * len, (k + 1) * len), (b) => b * scale);
  return { input, expected: ref.argmax[k], runtime: ref.runtime };
}

/** Path of the `ringfence` binary; fails with how to build it. */
export function ringfenceBinary() {
  const path = process.env.RINGFENCE_BIN ?? findBinary('ringfence')?.binPath;
  if (!path || !existsSync(path)) {
    throw new Error(
      `the native \`ringfence\` binary is missing (${path ?? 'no crate defines it'}): ` +
        'run `cargo build --release -p ringfence-relay --bin ringfence` (or `npm test`, which builds it), ' +
        'or set RINGFENCE_BIN',
    );
  }
  return path;
}

/** Resolves with the first stdout line of `child`, or rejects after `ms`. */
async function firstLine(child, ms, what) {
  return (await firstLines(child, 1, ms, what))[0];
}

/** Resolves with the first `count` stdout lines of `child`, or rejects after `ms`. */
function firstLines(child, count, ms, what) {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    const lines = [];
    const timer = setTimeout(() => reject(new Error(`${what}: ${lines.length} of ${count} lines within ${ms} ms`)), ms);
    rl.on('line', (line) => {
      // Lines already read may still be emitted after close(): only the first `count` count.
      if (lines.length >= count || lines.push(line) < count) return;
      clearTimeout(timer);
      rl.close();
      resolve(lines.slice());
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) after printing ${lines.length} of ${count} lines`));
    });
  });
}

/**
 * Starts `ringfence relay --listen 127.0.0.1:0 [args]`; returns `{ url, webTransport, stop }`,
 * `webTransport` being `{ url, certificateHash }` of its WebTransport front end when `args` ask
 * for one (`--webtransport ADDR`), else `undefined`. Its log goes to `log` (an array of stderr
 * lines) for tests that look at it.
 */
export async function startRelay(args = [], log = []) {
  const child = spawn(ringfenceBinary(), ['relay', '--listen', '127.0.0.1:0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  createInterface({ input: child.stderr }).on('line', (l) => log.push(l));
  const wanted = args.includes('--webtransport') ? 2 : 1;
  const [line, wtLine] = await firstLines(child, wanted, 20_000, 'ringfence relay');
  const url = line.trim().split(' ').pop();
  // `ringfence relay webtransport on https://ADDR (certificate sha-256 HEX)`
  const wt = wtLine?.match(/ on (https:\/\/\S+) \(certificate sha-256 ([0-9a-f]{64})\)$/);
  if (!url?.startsWith('ws://127.0.0.1:') || (wtLine !== undefined && !wt)) {
    child.kill();
    throw new Error(`ringfence relay printed ${JSON.stringify([line, wtLine])} (is the binary older than its sources?)`);
  }
  return {
    url,
    webTransport: wt ? { url: wt[1], certificateHash: wt[2] } : undefined,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}

/** Shape files written by {@link shapeFile}, by ONNX path. */
const shapes = new Map();

/**
 * The path of the shape file of the ONNX model at `onnx` (no weights: what P1 and P2 serve),
 * written once with `ringfence model shape` into a fresh temporary directory, under the same
 * file stem (the name a session party serves it under).
 */
export function shapeFile(onnx) {
  if (!shapes.has(onnx)) {
    const out = join(mkdtempSync(join(tmpdir(), 'ringfence-shape-')), basename(onnx).replace(/\.onnx$/, '') + '.rfshape');
    execFileSync(ringfenceBinary(), ['model', 'shape', onnx, '--out', out], { stdio: 'ignore' });
    shapes.set(onnx, out);
  }
  return shapes.get(onnx);
}

/**
 * Native compute parties (`ids`, by default all three) serving the ONNX model at `model`
 * (under its file stem, e.g. `nn-a`; P0, the model owner, loads that file, P1 and P2 its shape
 * file, {@link shapeFile}; the scores may be revealed) for one classification by a client, participant 3, whose
 * public key is `clientPublicKey`: `ringfence session-party` processes linked through the relay at `relayUrl`,
 * driven by their parent line protocol (relay/src/bin/ringfence/msgs.rs): this side writes
 * `setup` (the party's private key, all four public keys, the session), each party answers
 * with its `port`, this side sends `peers` (unused with a relay), and the party reports `served`
 * figures, then `done` or `error`. A party exits when its stdin closes, so `stop()` ends them.
 *
 * `keypairs` holds all the parties' keypairs (the parties not started here run elsewhere with
 * theirs: e.g. an SDK party in this process); five or seven make an rss session among them,
 * the client being participant 5 or 7. `args` are more options of every party, e.g.
 * `['--webrtc=10.0.0.2']` (then the parties report where each pair's frames went: `links`).
 *
 * Returns `{ done, stop }`: `done` resolves, once all started parties exited, with each one's
 * outcome `{ id, ok, message, report, links, stderr }`.
 */
export function serveModel({ relayUrl, model, sessionId, keypairs, clientPublicKey, ids = [0, 1, 2], timeoutMs = 20_000, args = [] }) {
  // As many servers as keypairs (3, or 5 or 7 for rss); the client follows them.
  const servers = keypairs.length;
  const publicKeys = [...keypairs.map((k) => toHex(k.publicKey)), toHex(clientPublicKey)];
  // Linked through the relay, the parties never dial these: the line protocol asks for them
  // anyway, so the parties not started here get a placeholder.
  const ports = keypairs.map(() => 0);
  let reported = 0;
  const children = ids.map((id) => {
    const child = spawn(
      ringfenceBinary(),
      ['session-party', '--id', String(id), '--parties', String(servers), '--model', id === 0 ? model : shapeFile(model), '--relay', relayUrl, '--timeout-ms', String(timeoutMs), ...args],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const send = (msg) => child.stdin.write(`${JSON.stringify(msg)}\n`);
    send({ type: 'setup', private_key: toHex(keypairs[id].privateKey), public_keys: publicKeys, session: toHex(sessionId), participants: servers + 1 });
    const outcome = { id, ok: false, message: 'exited without a word', report: undefined, links: undefined, stderr: '' };
    child.stderr.on('data', (d) => (outcome.stderr += d));
    child.stdin.on('error', () => {}); // the party may exit before reading everything
    createInterface({ input: child.stdout }).on('line', (line) => {
      const msg = JSON.parse(line);
      if (msg.type === 'port') {
        ports[id] = msg.port;
        if (++reported === ids.length) {
          const addrs = ports.map((p) => `127.0.0.1:${p}`);
          for (const c of children) c.send({ type: 'peers', addrs });
        }
      } else if (msg.type === 'served') {
        outcome.report = msg;
      } else if (msg.type === 'links') {
        outcome.links = msg.links;
      } else if (msg.type === 'done') {
        Object.assign(outcome, { ok: true, message: 'done' });
      } else if (msg.type === 'error') {
        outcome.message = msg.message;
      }
    });
    // 'close', not 'exit': every line of its stdout has been read by then.
    const exited = new Promise((resolve) => child.once('close', () => resolve(outcome)));
    exited.then(() => child.stdin.end());
    return { child, send, exited };
  });
  return {
    done: Promise.all(children.map((c) => c.exited)),
    stop: () => {
      for (const { child } of children) {
        child.stdin.end();
        setTimeout(() => child.kill(), 5_000).unref();
      }
      return Promise.all(children.map((c) => c.exited));
    },
  };
}

/**
 * An SDK compute party in this process, joined to the session as party `id` of the parties and
 * the client (whose public key is `clientPublicKey`): Noise links through the relay at
 * `relayUrl`, `keypairs` being the parties' keypairs (three: rep3's session; five or seven:
 * rss's). Returns
 * `{ party, close }`; `party.serve(...)` serves the client, `close()` leaves the session. The
 * SDK counterpart of the native parties of {@link serveModel}: a deployment may mix them.
 */
export async function joinServingParty({ relayUrl, id, sessionId, keypairs, clientPublicKey, timeoutMs = 20_000, onProgress }) {
  // As many servers as keypairs: three run rep3's session, five or seven rss's.
  const servers = keypairs.length;
  const publicKeys = [...keypairs.map((k) => k.publicKey), clientPublicKey];
  const transport = await SecureRelayTransport.connect({
    url: relayUrl, sessionId, id, keypair: keypairs[id], publicKeys, servers, parties: servers + 1, timeoutMs,
  });
  try {
    const scheme = servers === 3 ? undefined : 'rss';
    const party = await Party.join({ id, sessionId, seeds: transport.seeds, transport, servers, parties: servers + 1, scheme, onProgress });
    return { party, close: () => transport.close() };
  } catch (e) {
    transport.close();
    throw e;
  }
}

/**
 * Starts `ringfence local-deployment`: a relay on 127.0.0.1 that admits signed tokens only (over
 * WebSocket, and over WebTransport unless `webTransport` is false), and three long-running
 * `ringfence party` servers in the lobby of deployment `local`, serving every shipped model and
 * linked to each other by a mesh on loopback that makes METEOR setup runs ahead of demand (two
 * per model, not for the tree) — or, with `parties: 5` (or 7), that many serving rss, with no
 * mesh. Returns `{ relay, webTransport, deployment, publicKeys,
 * clientOptions(), token(session, party), events, onEvent(fn), shelf(), waitPrepared(model),
 * stop() }`: `webTransport` is `{ url, certificateHash }` of the relay's WebTransport front end
 * (its self-signed certificate's hash, for browsers) or `undefined`; `clientOptions()` gives
 * what `Client.connect` needs for a fresh session (its id and a token for it, issued with
 * `ringfence token issue`, and `webTransport`: browsers then connect over WebTransport, Node
 * over the WebSocket); `events` collects the parties' log events (`ringfence party --log json`,
 * each with `event` and `party`), and `onEvent(fn)` calls `fn` with each new one (it returns a
 * function that stops that). The events (docs/deployment.md, "Monitoring"):
 *
 * - per session, with `session` (the session id's first 8 hex digits): `answered` (`model`,
 *   `backend`, `batch`, `seconds`, `stocked`: whether the setup was a run made ahead by the
 *   mesh, `setup_seconds`, `setup_bytes`, `online_seconds`, `online_bytes`, `online_rounds`),
 *   `refused` (`reason`), `session_failed` (`error`);
 * - the mesh: `mesh_up` (`epoch`, 8 hex digits, the same at the three parties), `prepared`
 *   (one run made: `model`, `ready` (runs of it on this party's shelf now), `target`,
 *   `seconds`, `bytes` this party sent making it), `mesh_down` (`error`; the shelf was
 *   emptied, and the party reconnects);
 * - `waiting` (in the relay's lobby), `relay_unreachable`, `lobby_lost`, `bad_invitation`.
 *
 * Events a party logs before the deployment announces itself (its first `waiting`, perhaps its
 * `mesh_up`) are not passed on. `shelf()` and `waitPrepared(model)` read the mesh's events:
 * see {@link shelfTracker}.
 */
export async function startLocalDeployment({ timeoutMs = 60_000, webTransport = true, parties = 3 } = {}) {
  // clientOptions() makes each client's Noise keypair here, in Node, with the SDK.
  await init();
  const bin = ringfenceBinary();
  // Its stdin is its lifeline: it stops (cleanly) when this process ends or `stop()` closes it.
  const args = ['local-deployment', '--stop-on-stdin-eof', '--parties', String(parties), ...(webTransport ? [] : ['--no-webtransport'])];
  const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await firstLine(child, timeoutMs, 'ringfence local-deployment');
  let ready;
  try {
    ready = JSON.parse(line);
  } catch {
    child.kill();
    throw new Error(`ringfence local-deployment printed ${JSON.stringify(line)}`);
  }
  const events = [];
  const shelf = shelfTracker();
  const listeners = new Set([shelf.see]);
  createInterface({ input: child.stdout }).on('line', (l) => {
    let e;
    try {
      e = JSON.parse(l);
    } catch {
      return; // not an event line
    }
    events.push(e);
    for (const fn of listeners) fn(e);
  });
  const publicKeys = ready.public_keys.map((h) => Uint8Array.from(Buffer.from(h, 'hex')));
  const wt = ready.webtransport ? { url: ready.webtransport, certificateHash: ready.cert_sha256 } : undefined;
  if (webTransport && !wt) {
    child.kill();
    throw new Error(`ringfence local-deployment announced no WebTransport front end (is the binary older than its sources?): ${line}`);
  }
  return {
    relay: ready.relay,
    webTransport: wt,
    deployment: ready.deployment,
    publicKeys,
    events,
    onEvent(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    shelf: shelf.state,
    waitPrepared: shelf.waitPrepared,
    /**
     * Options for `Client.connect` for a fresh session of this deployment: a fresh client
     * `keypair` and a token bound to its public key, as an app's backend would issue for the
     * key its page sent.
     */
    clientOptions() {
      const session = randomBytes(16);
      const keypair = generateNoiseKeypair();
      return {
        // The client is the participant after the servers.
        relay: ready.relay, deployment: ready.deployment, session, token: this.token(session, publicKeys.length, keypair.publicKey), parties: publicKeys,
        keypair, ...(wt ? { webTransport: wt } : {}),
      };
    },
    /**
     * A join token for participant `party` of `session` (16 bytes) at this deployment's relay:
     * for compute parties run elsewhere (e.g. browsers) in a session of their own, or, with
     * `clientKey` (32 bytes), for a client inviting the deployment, bound to its public key.
     */
    token(session, party, clientKey) {
      return execFileSync(bin, [
        'token', 'issue', '--key', ready.signing_key_file, '--deployment', ready.deployment,
        '--party', String(party), '--session', toHex(session),
        ...(clientKey ? ['--client-key', toHex(clientKey)] : []),
      ]).toString().trim();
    },
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.stdin.end();
      }),
  };
}

/**
 * The mesh's shelves, as the parties' events tell them (fed every event with `see(e)`):
 *
 * - `state()` gives `{ mesh, models }`: `mesh[i]` is party i's mesh, `{ up, epoch }` or
 *   `{ up: false, error }` (`undefined` before it said anything), and
 *   `models[name][backend][i]` party i's latest `prepared` event of that model and backend
 *   (`meteor`, `rep3`) in the current epoch (`{ ready, target, seconds, bytes }`) or
 *   `undefined`. A session that takes a run shows only with the next `prepared` (the mesh
 *   makes a run again at once): between the two, `ready` is one too high.
 * - `waitPrepared(model, { backend, timeoutMs, signal })` resolves with the three parties'
 *   latest `prepared` events of `model` on `backend` (default `meteor`) once each of them says
 *   a run is ready (at once if they already do), so that a request for one sample made then
 *   takes a run made ahead (unless another session takes it first); rejects after `timeoutMs`
 *   (default 60 s), e.g. for runs the mesh does not make (`ready = { meteor = 0 }`), or when `signal`
 *   aborts.
 */
export function shelfTracker() {
  const mesh = [undefined, undefined, undefined];
  const models = {};
  const waiters = new Set();
  const latest = (model, backend) => [0, 1, 2].map((i) => models[model]?.[backend]?.[i]);
  const full = (model, backend) => latest(model, backend).every((e) => e?.ready > 0);
  const empty = (party) => {
    for (const m of Object.values(models)) {
      for (const b of Object.values(m)) if (b[party]) b[party] = { ...b[party], ready: 0 };
    }
  };
  return {
    see(e) {
      if (![0, 1, 2].includes(e.party)) return;
      if (e.event === 'mesh_up') {
        mesh[e.party] = { up: true, epoch: e.epoch };
        empty(e.party);
      } else if (e.event === 'mesh_down') {
        mesh[e.party] = { up: false, error: e.error };
        empty(e.party);
      } else if (e.event === 'prepared') {
        if (!mesh[e.party]?.up) mesh[e.party] = { up: true, epoch: mesh[e.party]?.epoch };
        const { ready, target, seconds, bytes } = e;
        ((models[e.model] ??= {})[e.backend] ??= [])[e.party] = { ready, target, seconds, bytes };
      } else {
        return;
      }
      for (const w of waiters) w();
    },
    state: () => ({
      mesh: mesh.map((m) => m && { ...m }),
      models: Object.fromEntries(
        Object.entries(models).map(([m, bs]) => [m, Object.fromEntries(Object.keys(bs).map((b) => [b, latest(m, b)]))]),
      ),
    }),
    waitPrepared(model, { backend = 'meteor', timeoutMs = 60_000, signal } = {}) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!full(model, backend)) return;
          done();
          resolve(latest(model, backend));
        };
        const fail = (e) => {
          done();
          reject(e);
        };
        const timer = setTimeout(() => fail(new Error(`no ${backend} run of ${model} made ahead at all three parties within ${timeoutMs} ms`)), timeoutMs);
        const aborted = () => fail(signal.reason);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
          signal?.removeEventListener('abort', aborted);
        };
        if (signal?.aborted) return aborted();
        signal?.addEventListener('abort', aborted, { once: true });
        waiters.add(check);
        check();
      });
    },
  };
}
