// Browser tests whose pages use WebRTC run inside a private network namespace: ICE gathers
// every interface it sees, and a test may talk only to loopback or to addresses of a network it
// made itself. `netnsTest` (the outer test file) runs another test file inside a namespace made
// with `unshare -n` (root) that holds loopback and a veth pair existing nowhere else, and is
// skipped, saying why, where `unshare -n` is not permitted; that file calls `assertInNetns` first.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { basename } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * The namespace's network (TOOLCHAIN.md recipe A): Chromium connects with its default flags.
 * The veths get no IPv6: their link-local addresses would finish duplicate address detection a
 * second or two after set-up, and Chromium, seeing addresses change under a page it is loading,
 * fails the page's requests with ERR_NETWORK_CHANGED (seen on a loaded machine).
 */
const NETWORK = [
  'echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6',
  'ip link set lo up',
  'ip link add v0 type veth peer name v1',
  'ip addr add 10.200.0.1/24 dev v0',
  'ip addr add 10.200.0.2/24 dev v1',
  'ip link set v0 up',
  'ip link set v1 up',
  'ip route add default via 10.200.0.2 dev v0',
].join(' && ');

/** The only interfaces a namespace of {@link NETWORK} has. */
const INTERFACES = ['lo', 'v0', 'v1'];

/**
 * A test that runs the test file `inner` (a URL) in a fresh private network namespace and
 * passes when every test there passed (at least one); their outcomes and times appear as this
 * test's diagnostics.
 */
export function netnsTest(name, inner, { timeout }) {
  test(name, { timeout }, async (t) => {
    const why = netnsRefusal();
    if (why !== undefined) {
      t.skip(`\`unshare -n\` is not permitted here (${why}): this test runs only inside a private network namespace`);
      return;
    }
    // A test file of its own there (node:test refuses to nest runners: its context variable goes).
    const child = spawnInNetns(['--test-reporter=spec', fileURLToPath(inner)], ['ignore', 'pipe', 'pipe']);
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
}

/** Why `unshare -n` is not permitted here, or `undefined` when it is. */
export function netnsRefusal() {
  const probe = spawnSync('unshare', ['-n', 'true'], { encoding: 'utf8' });
  if (!probe.error && probe.status === 0) return undefined;
  return probe.error?.message ?? (probe.stderr.trim() || `exit status ${probe.status}`);
}

/**
 * Runs `node ARGS` in a fresh namespace of {@link NETWORK} (where {@link assertInNetns} holds);
 * returns the child process.
 */
export function spawnInNetns(args, stdio) {
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  return spawn('unshare', ['-n', '--', 'sh', '-c', `${NETWORK} && exec "$@"`, 'netns', process.execPath, ...args], {
    env: { ...env, RINGFENCE_PARENT_NETNS: readlinkSync('/proc/self/ns/net') },
    stdio,
  });
}

/**
 * Throws unless this process runs inside a namespace that {@link netnsTest} made: never where a
 * real interface is. `file` is the calling file's `import.meta.url`.
 */
export function assertInNetns(file) {
  const interfaces = Object.keys(networkInterfaces());
  const parent = process.env.RINGFENCE_PARENT_NETNS;
  if (!parent || readlinkSync('/proc/self/ns/net') === parent || interfaces.some((i) => !INTERFACES.includes(i))) {
    throw new Error(
      `${basename(fileURLToPath(file))} runs only inside the network namespace its test file makes (interfaces here: ${interfaces.join(', ')})`,
    );
  }
}
