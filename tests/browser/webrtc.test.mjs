// Three browser pages as the three parties, over direct WebRTC DataChannels (RtcTransport),
// computing a product and a LeNet inference: webrtc-netns.mjs, run here inside a private
// network namespace made with `unshare -n` (root), where ICE finds loopback and a veth pair
// that exists only there — never a real interface. Skipped, saying why, where `unshare -n` is
// not permitted.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const INNER = fileURLToPath(new URL('./webrtc-netns.mjs', import.meta.url));

/** The namespace's network (TOOLCHAIN.md recipe A): Chromium connects with its default flags. */
const NETWORK = [
  'ip link set lo up',
  'ip link add v0 type veth peer name v1',
  'ip addr add 10.200.0.1/24 dev v0',
  'ip addr add 10.200.0.2/24 dev v1',
  'ip link set v0 up',
  'ip link set v1 up',
  'ip route add default via 10.200.0.2 dev v0',
].join(' && ');

test('three browser pages compute a product and LeNet over WebRTC DataChannels (in a private network namespace)', { timeout: 360_000 }, async (t) => {
  const probe = spawnSync('unshare', ['-n', 'true'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    const why = probe.error?.message ?? (probe.stderr.trim() || `exit status ${probe.status}`);
    t.skip(`\`unshare -n\` is not permitted here (${why}): the WebRTC test runs only inside a private network namespace`);
    return;
  }
  // A test file of its own there (node:test refuses to nest runners: its context variable goes).
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const child = spawn(
    'unshare',
    ['-n', '--', 'sh', '-c', `${NETWORK} && exec "$@"`, 'netns', process.execPath, '--test-reporter=spec', INNER],
    { env: { ...env, RINGFENCE_PARENT_NETNS: readlinkSync('/proc/self/ns/net') }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const status = await new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? signal)));
  // The inner tests' outcomes and times (spec reporter: ✔/✖ NAME (MS), ℹ totals).
  for (const line of output.split('\n')) {
    if (/^[✔✖] |^ℹ (tests|pass|fail|duration_ms) /.test(line)) t.diagnostic(`netns: ${line}`);
  }
  assert.ok(/^ℹ pass [1-9]/m.test(output), `no test passed inside the namespace:\n${output}`);
  assert.equal(status, 0, `the tests inside the namespace failed:\n${output}`);
});
