// Helpers of the WebSocket tests (ws*.test.mjs): the native `ringfence` binary, a relay it runs
// on an ephemeral loopback port, and party processes. `node scripts/test.mjs` builds the
// release binary before the web tests; RINGFENCE_BIN overrides where it is looked for.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { createInterface } from 'node:readline';
import { findBinary } from '../../scripts/lib/common.mjs';

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
 * Runs `ringfence party ...args` to completion (at most `ms`), writing `stdin` (e.g. its Noise
 * keys) to it; resolves with its stdout's parsed JSON line, rejects with its stderr if it fails.
 */
export function runParty(args, { ms = 60_000, stdin = '' } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(ringfenceBinary(), ['party', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end(stdin);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill(), ms);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`ringfence party ${args.join(' ')} failed (${code ?? signal}):\n${err}`));
      try {
        resolve(JSON.parse(out.trim()));
      } catch (e) {
        reject(new Error(`ringfence party printed ${JSON.stringify(out)}: ${e.message}`));
      }
    });
  });
}

/** The 16-byte session id as 32 hex digits. */
export const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

const wrap = (x) => BigInt.asIntN(64, x);

/**
 * The interoperability check program (the same as `ringfence party`): P_i inputs `inputs[i]`
 * (length d²); reveals x0·x1, x0 < x1 and the d×d product x0·x2. Returns the JSON shape
 * `ringfence party` prints.
 */
export async function checkProgram(party, id, inputs, d) {
  const n = d * d;
  const x = [];
  for (const owner of [0, 1, 2]) x.push(await party.input(owner, owner === id ? BigInt64Array.from(inputs[id]) : null, n));
  const mul = await party.mul(x[0], x[1]);
  const lt = await party.lt(x[0], x[1]);
  const mm = await party.matmul(x[0], x[2], d, d, d);
  const strings = (v) => Array.from(v, (b) => b.toString());
  return {
    mul: strings(await party.reveal(mul)),
    lt: Array.from(await party.revealBits(lt)),
    matmul: strings(await party.reveal(mm)),
  };
}

/** What `checkProgram` must reveal, computed in BigInt plaintext. */
export function checkPlaintext(inputs, d) {
  const [x0, x1, x2] = inputs;
  const mm = [];
  for (let r = 0; r < d; r++) {
    for (let c = 0; c < d; c++) {
      let s = 0n;
      for (let k = 0; k < d; k++) s += x0[r * d + k] * x2[k * d + c];
      mm.push(wrap(s).toString());
    }
  }
  return {
    mul: x0.map((a, i) => wrap(a * x1[i]).toString()),
    lt: x0.map((a, i) => (a < x1[i] ? 1 : 0)),
    matmul: mm,
  };
}

/**
 * A TCP proxy on 127.0.0.1 in front of the relay at `relayUrl`: returns `{ url, seen, stop }`
 * where `seen()` is every byte the relay sent through it. Server-to-client WebSocket frames are
 * unmasked, so this is exactly what the relay saw of the parties' payloads.
 */
export async function tap(relayUrl) {
  const { hostname, port } = new URL(relayUrl);
  const chunks = [];
  const sockets = new Set();
  const server = createServer((client) => {
    const upstream = tcpConnect(Number(port), hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream);
    upstream.on('data', (d) => chunks.push(Buffer.from(d)));
    upstream.pipe(client);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `ws://127.0.0.1:${server.address().port}`,
    seen: () => Buffer.concat(chunks),
    stop: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
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
  const toHex = (b) => Buffer.from(b).toString('hex');
  const publicKeys = [...keypairs.map((k) => toHex(k.publicKey)), toHex(clientPublicKey)];
  const ports = [];
  const children = [0, 1, 2].map((id) => {
    const child = spawn(
      ringfenceBinary(),
      ['demo-party', '--id', String(id), '--model', model, '--relay', relayUrl, '--timeout-ms', String(timeoutMs)],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const send = (msg) => child.stdin.write(`${JSON.stringify(msg)}\n`);
    send({ type: 'setup', private_key: toHex(keypairs[id].privateKey), public_keys: publicKeys, session: hex(sessionId), participants: 4 });
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
