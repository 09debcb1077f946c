// Helpers of the WebSocket tests (ws*.test.mjs, client-suite.mjs): the native `ringfence` binary,
// a relay it runs on an ephemeral loopback port, and party processes (the relay and the serving
// parties come from examples/local-deployment.mjs, which the README's client example uses too).
// `node scripts/test.mjs` builds the release binary before the web tests; RINGFENCE_BIN
// overrides where it is looked for.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, connect as tcpConnect } from 'node:net';
import { after, before } from 'node:test';
import { RingfenceError, init } from 'ringfence';
import { ringfenceBinary, startRelay } from '../examples/local-deployment.mjs';

export { ringfenceBinary, serveModel, startRelay } from '../examples/local-deployment.mjs';

/**
 * A relay for the calling test file: started (after `init()`) before its tests, stopped after
 * them. `url` is set once the tests run; `log` collects the relay's lines.
 */
export function relayForTests() {
  const relay = { url: undefined, log: [] };
  let running;
  before(async () => {
    await init();
    running = await startRelay([], relay.log);
    relay.url = running.url;
  });
  after(() => running?.stop());
  return relay;
}

/** Awaits `p`, which must reject with a RingfenceError of `code`; returns the error. */
export async function rejectsWith(p, code) {
  const e = await p.then(
    () => assert.fail(`expected ${code}`),
    (e) => e,
  );
  assert.ok(e instanceof RingfenceError, String(e?.stack ?? e));
  assert.equal(e.code, code, e.message);
  return e;
}


/**
 * Runs `ringfence party ...args` to completion (at most `ms`), writing `stdin` (e.g. its Noise
 * keys) to it; resolves with its stdout's parsed JSON line, rejects with its stderr if it fails.
 */
export function runParty(args, { ms = 60_000, stdin = '' } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(ringfenceBinary(), ['interop-party', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end(stdin);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill(), ms);
    // 'close', not 'exit': 'exit' can fire before the last stdout chunk has been read (seen in
    // CI under load: exit code 0 with an empty stdout).
    child.on('close', (code, signal) => {
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

