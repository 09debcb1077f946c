// A local deployment for trying the SDK's `Client` (and for its tests): the native relay and three
// native compute parties serving a shipped model, all processes of the `ringfence` binary
// (`npm run demo` builds it, or `cargo build --release -p ringfence-relay --bin ringfence`;
// RINGFENCE_BIN overrides where it is looked for). Not part of the npm package.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { generateNoiseKeypair } from 'ringfence';
import { findBinary } from '../../scripts/lib/common.mjs';

const toHex = (b) => Buffer.from(b).toString('hex');

/**
 * Starts a relay and three parties serving `models/NAME.onnx` (under `NAME`) to the client
 * whose public key is `client`, for one classification in `session`. Returns `{ relay,
 * publicKeys, done, stop }`: the relay's URL and the parties' public keys for
 * `Client.connect`, `done` (see {@link serveModel}), and `stop()`, which ends everything.
 * Requires `await init()` (the parties' keys are made with the SDK).
 */
export async function startDeployment({ model, session, client }) {
  const relay = await startRelay();
  const keypairs = [0, 1, 2].map(() => generateNoiseKeypair());
  const path = fileURLToPath(new URL(`../../models/${model}.onnx`, import.meta.url));
  const parties = serveModel({ relayUrl: relay.url, model: path, sessionId: session, keypairs, clientPublicKey: client });
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
function firstLine(child, ms, what) {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error(`${what}: no output within ${ms} ms`)), ms);
    rl.once('line', (line) => {
      clearTimeout(timer);
      rl.close();
      resolve(line);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) before printing anything`));
    });
  });
}

/**
 * Starts `ringfence relay --listen 127.0.0.1:0 [args]`; returns `{ url, stop }`. Its log goes to
 * `log` (an array of stderr lines) for tests that look at it.
 */
export async function startRelay(args = [], log = []) {
  const child = spawn(ringfenceBinary(), ['relay', '--listen', '127.0.0.1:0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  createInterface({ input: child.stderr }).on('line', (l) => log.push(l));
  const line = await firstLine(child, 20_000, 'ringfence relay');
  const url = line.trim().split(' ').pop();
  if (!url?.startsWith('ws://127.0.0.1:')) {
    child.kill();
    throw new Error(`ringfence relay printed ${JSON.stringify(line)} (is the binary older than its sources?)`);
  }
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}

/**
 * Three native compute parties serving the ONNX model at `model` (under its file stem, e.g.
 * `nn-a`) for one classification by a client, participant 3, whose public key is
 * `clientPublicKey`: `ringfence demo-party` processes linked through the relay at `relayUrl`,
 * driven by their parent line protocol (relay/src/bin/ringfence/msgs.rs): this side writes
 * `setup` (the party's private key, all four public keys, the session), each party answers
 * with its `port`, this side sends `peers` (unused with a relay), and the party reports `demo`
 * figures, then `done` or `error`. A party exits when its stdin closes, so `stop()` ends them.
 *
 * Returns `{ done, stop }`: `done` resolves, once all three exited, with each party's outcome
 * `{ ok, message, report, stderr }`.
 */
export function serveModel({ relayUrl, model, sessionId, keypairs, clientPublicKey, timeoutMs = 20_000 }) {
  const publicKeys = [...keypairs.map((k) => toHex(k.publicKey)), toHex(clientPublicKey)];
  const ports = [];
  const children = [0, 1, 2].map((id) => {
    const child = spawn(
      ringfenceBinary(),
      ['demo-party', '--id', String(id), '--model', model, '--relay', relayUrl, '--timeout-ms', String(timeoutMs)],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const send = (msg) => child.stdin.write(`${JSON.stringify(msg)}\n`);
    send({ type: 'setup', private_key: toHex(keypairs[id].privateKey), public_keys: publicKeys, session: toHex(sessionId), participants: 4 });
    const outcome = { ok: false, message: 'exited without a word', report: undefined, stderr: '' };
    child.stderr.on('data', (d) => (outcome.stderr += d));
    child.stdin.on('error', () => {}); // the party may exit before reading everything
    createInterface({ input: child.stdout }).on('line', (line) => {
      const msg = JSON.parse(line);
      if (msg.type === 'port') {
        ports[id] = msg.port;
        if (ports.filter(Number.isInteger).length === 3) {
          const addrs = ports.map((p) => `127.0.0.1:${p}`);
          for (const c of children) c.send({ type: 'peers', addrs });
        }
      } else if (msg.type === 'demo') {
        outcome.report = msg;
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
