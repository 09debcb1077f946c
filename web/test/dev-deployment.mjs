// `ringfence local-deployment --dev` for tests (pack.test.mjs, examples/node-client): the local
// deployment plus its development session endpoint, on a free port instead of 8787.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { ringfenceBinary } from '../examples/local-deployment.mjs';

/** What the quick starts and the node-client example fetch (the default of `--dev-http`). */
export const DEFAULT_SESSION_URL = 'http://127.0.0.1:8787/session';

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/**
 * Starts `ringfence local-deployment --dev --dev-http 127.0.0.1:PORT` and waits for its ready
 * line, which must name the session endpoint (`"dev"`). Resolves with `{ sessionUrl, stop }`.
 * Fails, saying so, with a binary that has no `--dev`.
 */
export async function startDevDeployment({ timeoutMs = 60_000 } = {}) {
  const port = await freePort();
  const child = spawn(ringfenceBinary(), ['local-deployment', '--dev', '--dev-http', `127.0.0.1:${port}`], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      child.stdin.end();
    });
  const line = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`ringfence local-deployment --dev: no ready line within ${timeoutMs} ms; stderr:\n${stderr}`)), timeoutMs);
    createInterface({ input: child.stdout }).once('line', (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(
        `\`ringfence local-deployment --dev\` exited (${code}) before it was ready: these tests need the binary with ` +
          `--dev (rebuild it: cargo build --release -p ringfence-relay --bin ringfence). Its stderr:\n${stderr}`,
      ));
    });
  }).catch(async (e) => {
    await stop();
    throw e;
  });
  const sessionUrl = `http://127.0.0.1:${port}/session`;
  let dev;
  try {
    dev = JSON.parse(line).dev;
  } catch {
    dev = undefined;
  }
  if (dev !== sessionUrl) {
    await stop();
    throw new Error(`ringfence local-deployment --dev printed ${JSON.stringify(line)}: expected "dev": "${sessionUrl}"`);
  }
  return { sessionUrl, stop };
}
