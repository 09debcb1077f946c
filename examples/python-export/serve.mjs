// Serves the model export_digits.py wrote with three `ringfence party --config` servers, set up
// the way three operators would (README "Deploying"), all on 127.0.0.1 in a temporary
// directory; then classifies the held-out digits of samples.json privately with the SDK's
// Client, on both protocols, and checks every class against onnxruntime's. Exits 1 on a
// disagreement.
//   node examples/python-export/serve.mjs [OUT_DIR]      (OUT_DIR: export_digits.py's --out)
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client, generateNoiseKeypair, init, randomSessionId } from 'ringfence';
import { ringfenceBinary, startRelay } from '../../web/examples/local-deployment.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const out = resolve(process.argv[2] ?? join(HERE, 'out'));
const samples = JSON.parse(readFileSync(join(out, 'samples.json'), 'utf8'));
const model = join(out, samples.model);
const bin = ringfenceBinary();
const cli = (...args) => execFileSync(bin, args, { encoding: 'utf8' });
const publicKeyIn = (text) => text.match(/^public key ([0-9a-f]{64})$/m)[1];
const hex = (bytes) => Buffer.from(bytes).toString('hex');
const DEPLOYMENT = 'digits-demo';

const dir = mkdtempSync(join(tmpdir(), 'ringfence-python-export-'));
const at = (file) => join(dir, file);
const parties = [];
let relay;
try {
  // The deployment's owner: a signing key, whose public half the relay trusts.
  const deployPub = publicKeyIn(cli('token', 'key', '--out', at('deploy.key')));
  relay = await startRelay(['--deployment', `${DEPLOYMENT}=${deployPub}`]);
  // Each operator: an identity key and a token for any session; then the config file.
  const keys = [0, 1, 2].map((i) => publicKeyIn(cli('keygen', '--out', at(`p${i}.key`))));
  const template = readFileSync(join(HERE, 'party.toml.in'), 'utf8');
  // The model's owner (P0) keeps the ONNX file; P1 and P2 get its shape file, without weights.
  cli('model', 'shape', model, '--out', at('digits.rfshape'));
  for (const i of [0, 1, 2]) {
    const token = cli('token', 'issue', '--key', at('deploy.key'), '--deployment', DEPLOYMENT,
      '--party', String(i), '--any-session', '--ttl-secs', '3600');
    writeFileSync(at(`p${i}.token`), token);
    const file = i === 0 ? model : at('digits.rfshape');
    const values = { party: i, relay: relay.url, deployment_key: deployPub, public_keys: keys.map((k) => `"${k}"`).join(', '), model: file };
    writeFileSync(at(`p${i}.toml`), template.replace(/\{\{(\w+)\}\}/g, (_, name) => String(values[name])));
  }
  // The three servers; each logs one JSON line per event, `waiting` once it is in the lobby.
  await Promise.all([0, 1, 2].map((i) => new Promise((ok, fail) => {
    const child = spawn(bin, ['party', '--log', 'json', '--config', at(`p${i}.toml`)], { stdio: ['ignore', 'pipe', 'inherit'] });
    parties.push(child);
    child.once('exit', (code) => fail(new Error(`ringfence party ${i} exited (${code}) before it was ready`)));
    createInterface({ input: child.stdout }).on('line', (l) => JSON.parse(l).event === 'waiting' && ok());
  })));
  console.log(`deployment ${DEPLOYMENT}: relay ${relay.url}, 3 parties serving ${model}`);

  // A client per classification, with a token for its session bound to its key (a web backend
  // would issue it for the public key the page sent).
  await init();
  let wrong = 0;
  for (const backend of ['meteor', 'rep3']) {
    const got = [];
    for (const pixels of samples.inputs) {
      const session = randomSessionId();
      const keypair = generateNoiseKeypair();
      const token = cli('token', 'issue', '--key', at('deploy.key'), '--deployment', DEPLOYMENT,
        '--party', '3', '--session', hex(session), '--client-key', hex(keypair.publicKey)).trim();
      const client = await Client.connect({ relay: relay.url, deployment: DEPLOYMENT, session, token, keypair, parties: keys.map((k) => Buffer.from(k, 'hex')) });
      try {
        got.push((await client.classify('digits', pixels, { backend })).classes[0]);
      } finally {
        client.close();
      }
    }
    const same = got.filter((c, k) => c === samples.labels[k]).length;
    wrong += got.length - same;
    console.log(`${backend}: classes ${got.join(' ')}; ${same}/${got.length} equal ${samples.runtime}'s`);
  }
  process.exitCode = wrong ? 1 : 0;
} finally {
  for (const p of parties) p.kill('SIGTERM'); // a party leaves the lobby and drains on SIGTERM
  await Promise.all(parties.map((p) => (p.exitCode === null && p.signalCode === null ? new Promise((ok) => p.once('exit', ok)) : null)));
  await relay?.stop();
  rmSync(dir, { recursive: true, force: true });
}
