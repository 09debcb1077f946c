// issue-token.mjs signs exactly what `ringfence token issue` signs: for the same key, session,
// party and expiry the two tokens are the same string (Ed25519 signatures are deterministic),
// for a client's session token (bound to its key, and not) and a server party's any-session token. (That the relay admits
// the CLI's tokens is tested by relay/tests/deployment.rs and web/test/deployment.test.mjs.)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ringfenceBinary } from '../../web/examples/local-deployment.mjs';
import { deploymentKey, issueToken } from './issue-token.mjs';

test('issueToken() gives the token `ringfence token issue` gives', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ringfence-token-'));
  try {
    const file = join(dir, 'deploy.key');
    execFileSync(ringfenceBinary(), ['token', 'key', '--out', file]);
    const key = deploymentKey(readFileSync(file, 'utf8'));
    const session = randomBytes(16);
    const clientKey = randomBytes(32);
    const cases = [
      [{ deployment: 'acme', session, party: 3, clientKey, ttlSecs: 600 }, ['--party', '3', '--session', session.toString('hex'), '--client-key', clientKey.toString('hex'), '--ttl-secs', '600']],
      [{ deployment: 'acme', session, party: 3, ttlSecs: 600 }, ['--party', '3', '--session', session.toString('hex'), '--ttl-secs', '600']],
      [{ deployment: 'acme', session: 'any', party: 1, ttlSecs: 31536000 }, ['--party', '1', '--any-session', '--ttl-secs', '31536000']],
    ];
    for (const [opts, args] of cases) {
      const cli = execFileSync(ringfenceBinary(), ['token', 'issue', '--key', file, '--deployment', 'acme', ...args], { encoding: 'utf8' }).trim();
      const expires = Number(cli.split('.').at(-2));
      assert.equal(issueToken(key, { ...opts, now: (expires - opts.ttlSecs) * 1000 }), cli);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
