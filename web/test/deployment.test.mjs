// The SDK's Client against a deployment of long-running native server parties
// (`ringfence local-deployment`: a relay requiring signed tokens, three `ringfence party`
// servers in its lobby): concurrent classifications equal onnxruntime's classes, the relay
// invites the parties per session, and a client without a valid token is turned away.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client, init } from 'ringfence';
import { referenceSample, startLocalDeployment } from '../examples/local-deployment.mjs';

let d;
before(async () => {
  await init();
  d = await startLocalDeployment();
});
after(async () => d?.stop());

async function classify(model, k, backend) {
  const { input, expected } = referenceSample(model, k);
  const client = await Client.connect(d.clientOptions());
  try {
    const r = await client.classify(model, input, { backend });
    return { got: r.classes[0], expected, sent: r.sent };
  } finally {
    client.close();
  }
}

test('concurrent clients of a deployment get the plaintext model’s classes', async () => {
  const jobs = [
    ['lenet', 0, 'meteor'],
    ['nn-a', 1, 'rep3'],
    ['nn-b', 2, 'meteor'],
    ['logreg', 3, 'rep3'],
    ['tree', 4, 'rep3'],
  ];
  const results = await Promise.all(jobs.map(([m, k, b]) => classify(m, k, b)));
  for (const [[m, k, b], r] of jobs.map((j, i) => [j, results[i]])) {
    assert.equal(r.got, r.expected, `${m} #${k} ${b}`);
  }
  // Each party logged one answered session per client.
  const deadline = Date.now() + 10_000;
  while (d.events.filter((e) => e.event === 'answered').length < 3 * jobs.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(d.events.filter((e) => e.event === 'answered').length, 3 * jobs.length);
});

test('the deployment refuses unknown models, and the relay clients without a valid token, saying what to do', async () => {
  const client = await Client.connect(d.clientOptions());
  const e = await client.classify('vgg16', new Float32Array(784)).catch((x) => x);
  client.close();
  assert.equal(e.code, 'REFUSED');
  assert.match(e.message, /vgg16/);
  assert.doesNotMatch(e.message, /lenet/, 'the refusal does not list what the deployment serves');

  // Each refusal says what to do about it (the relay's reason comes along).
  const { token, ...noToken } = d.clientOptions();
  assert.ok(token);
  const refused = await Client.connect({ ...noToken, timeoutMs: 5_000 }).catch((x) => x);
  assert.equal(refused.name, 'RingfenceError', String(refused));
  assert.match(refused.message, /the relay requires a join token for this session: pass `token` \(`ringfence local-deployment --dev` serves one at http:\/\/127\.0\.0\.1:8787\/session/);
  assert.match(refused.message, /\(relay: 401 this relay requires a token\)$/);
  const other = d.clientOptions();
  // A genuine token for this client's key, but another session.
  const elsewhere = d.token(globalThis.crypto.getRandomValues(new Uint8Array(16)), 3, other.keypair.publicKey);
  const stolen = await Client.connect({ ...other, token: elsewhere, timeoutMs: 5_000 }).catch((x) => x);
  assert.equal(stolen.name, 'RingfenceError', String(stolen));
  assert.match(stolen.message, /the join token is not for this connection: pass the token issued for this session id and participant 3 \(relay: 403 the token is for another session\)$/);
  const stale = await Client.connect({ ...other, token: `${other.token.slice(0, -4)}0000`, timeoutMs: 5_000 }).catch((x) => x);
  assert.match(stale.message, /the relay did not accept the join token .*get a fresh token .*\(relay: 401 token signature is not "local"'s\)$/);
  const typo = await Client.connect({ ...d.clientOptions(), deployment: 'locale', timeoutMs: 5_000 }).catch((x) => x);
  assert.match(typo.message, /the relay has no deployment "locale": check `deployment`/);
  // A token without its deployment: named before anything is sent.
  const { deployment, keypair, ...noDeployment } = d.clientOptions();
  const missing = await Client.connect(noDeployment).catch((x) => x);
  assert.equal(missing.code, 'INVALID_ARGUMENT', String(missing));
  assert.ok(missing.message.includes(`a token but no deployment: pass \`deployment\` ('${deployment}', the token's)`), missing.message);
  // The deployment still serves a proper client afterwards.
  const r = await classify('nn-a', 7, 'meteor');
  assert.equal(r.got, r.expected);
});

test('a deployment of five servers serves rss (the default there) and refuses three-server families', async () => {
  const five = await startLocalDeployment({ parties: 5, webTransport: false });
  try {
    assert.equal(five.publicKeys.length, 5);
    const run = async (model, k, options) => {
      const { input, expected } = referenceSample(model, k);
      const client = await Client.connect(five.clientOptions());
      try {
        const r = await client.classify(model, input, options);
        return { got: r.classes[0], expected, r };
      } finally {
        client.close();
      }
    };
    for (const [model, k, options] of [['nn-a', 11, {}], ['logreg', 5, { backend: 'rss', output: 'class' }]]) {
      const { got, expected, r } = await run(model, k, options);
      assert.equal(got, expected, `${model} #${k}`);
      assert.equal(r.sent.length, 5, 'one view per server');
      assert.equal(r.scores === undefined, options.output === 'class');
    }
    const e = await run('nn-a', 0, { backend: 'rep3' }).catch((x) => x);
    assert.equal(e.code, 'REFUSED', String(e));
    assert.match(e.message, /rep3 runs among 3 servers; this deployment has 5 and serves rss/);
  } finally {
    await five.stop();
  }
  // A three-server deployment refuses rss the same way.
  const client = await Client.connect(d.clientOptions());
  const { input } = referenceSample('nn-a', 0);
  const e = await client.classify('nn-a', input, { backend: 'rss' }).catch((x) => x);
  client.close();
  assert.equal(e.code, 'REFUSED', String(e));
  assert.match(e.message, /rss runs among 5 or 7 servers; this deployment has 3/);
});

test('a deployment of two servers serves spdz2k: the client computes as the third party', async () => {
  const two = await startLocalDeployment({ parties: 2, webTransport: false });
  try {
    assert.equal(two.publicKeys.length, 2);
    const { input, expected } = referenceSample('logreg', 7);
    const client = await Client.connect({ ...two.clientOptions(), timeoutMs: 120_000 });
    try {
      // spdz2k is the default with two servers.
      const r = await client.classify('logreg', input, { output: 'class' });
      assert.equal(r.classes[0], expected, 'logreg #7 among three parties');
      // scikit-learn's classes_, from the model owner's description.
      assert.deepEqual(r.model.classLabels, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      assert.deepEqual(r.labels, [expected]);
      assert.deepEqual(r.sent, [], 'the servers receive the input only masked, inside the protocol');
    } finally {
      client.close();
    }
  } finally {
    await two.stop();
  }
});

/**
 * A computing client's setup (seconds in wasm: logreg's 26 MB of material) reported its
 * preprocessing while it ran: between `setup` and `next`, each event saying what it was making and
 * how much of it, the counts never going back within a kind.
 */
function preprocessingReported(events, next) {
  const stages = events.map((e) => e.stage);
  const [from, to] = [stages.indexOf('setup'), stages.indexOf(next)];
  const reports = events.filter((e) => e.stage === 'preprocessing');
  assert.ok(reports.length > 0, `no preprocessing reported during the setup: ${stages}`);
  assert.ok(stages.slice(from + 1, to).every((s) => s === 'preprocessing'), `${stages}`);
  assert.equal(stages.lastIndexOf('preprocessing'), to - 1, `${stages}`);
  let last = { making: '', done: 0, madeBefore: -1 };
  for (const { preprocessing: p } of reports) {
    assert.ok(p.making.length > 0 && p.total > 0 && p.done <= p.total, JSON.stringify(p));
    const same = p.making === last.making && p.madeBefore === last.madeBefore;
    assert.ok(!same || p.done > last.done, `${JSON.stringify(last)} then ${JSON.stringify(p)}`);
    assert.ok(p.madeBefore >= Math.max(last.madeBefore, 0), `${JSON.stringify(last)} then ${JSON.stringify(p)}`);
    last = p;
  }
}

test('a deployment of one server serves spdz2k: the client computes as the second party', async () => {
  const one = await startLocalDeployment({ parties: 1, webTransport: false });
  try {
    assert.equal(one.publicKeys.length, 1);
    const run = async (model, k, options) => {
      const { input, expected } = referenceSample(model, k);
      const events = [];
      const client = await Client.connect({ ...one.clientOptions(), onProgress: (e) => events.push(e), timeoutMs: 120_000 });
      try {
        const r = await client.classify(model, input, options);
        return { got: r.classes[0], expected, r, events };
      } finally {
        client.close();
      }
    };
    for (const [k, options] of [[6, {}], [8, { backend: 'spdz2k', output: 'class' }]]) {
      const { got, expected, r, events } = await run('logreg', k, options);
      assert.equal(got, expected, `logreg #${k}`);
      assert.equal(r.scores === undefined, options.output === 'class');
      assert.deepEqual(r.sent, [], 'the server receives the input only masked, inside the protocol');
      const stages = events.filter((e) => e.stage !== 'preprocessing');
      assert.deepEqual(stages.map((e) => e.stage), ['connecting', 'request', 'setup', 'online', 'done']);
      // The client makes the preprocessing with the server: the setup is most of its traffic.
      const setup = stages[3].bytesSent - stages[2].bytesSent;
      assert.ok(setup > 1_000_000, `the client's setup sent ${setup} bytes`);
      preprocessingReported(events, 'online');
    }
    const e = await run('logreg', 0, { backend: 'rep3' }).catch((x) => x);
    assert.equal(e.code, 'REFUSED', String(e));
    assert.match(e.message, /rep3 runs among 3 servers; this deployment has 1 and serves spdz2k/);
    // prepare: the request and the setup before the input is known; classify pays only the
    // online phase.
    const { input, expected } = referenceSample('logreg', 3);
    const events = [];
    const client = await Client.connect({ ...one.clientOptions(), onProgress: (e) => events.push(e), timeoutMs: 120_000 });
    try {
      const ready = client.prepare('logreg', { output: 'class' });
      // While a run is prepared, a classification with other options is refused (nothing sent).
      const other = await client.classify('logreg', input).catch((x) => x);
      assert.equal(other.code, 'API_MISUSE', String(other));
      assert.match(other.message, /a run of 'logreg' \(backend spdz2k, output class, batch 1\) is prepared/);
      const again = await client.prepare('logreg').catch((x) => x);
      assert.equal(again.code, 'API_MISUSE', String(again));
      const p = await ready;
      assert.equal(p.model.inputLen, input.length);
      assert.ok(p.stats.bytesSent > 1_000_000, `the preparation sent ${p.stats.bytesSent} bytes`);
      assert.ok(p.timings.setup > 0);
      // An input that does not fit the model leaves the run prepared.
      const short = await client.classify('logreg', input.slice(1), { output: 'class' }).catch((x) => x);
      assert.equal(short.code, 'LENGTH_MISMATCH', String(short));
      const r = await client.classify('logreg', input, { output: 'class' });
      assert.equal(r.classes[0], expected, 'logreg #3, prepared');
      assert.equal(r.timings.waited, 0, 'the preparation had finished');
      const stages = events.filter((e) => e.stage !== 'preprocessing');
      assert.deepEqual(stages.map((e) => e.stage), ['connecting', 'request', 'setup', 'prepared', 'online', 'done']);
      const online = stages[5].bytesSent - stages[4].bytesSent;
      assert.ok(online * 20 < p.stats.bytesSent, `online ${online} B against ${p.stats.bytesSent} B prepared`);
      assert.equal(r.stats.bytesSent, stages[5].bytesSent - stages[1].bytesSent, 'the run\'s stats include its preparation');
      preprocessingReported(events, 'prepared');
    } finally {
      client.close();
    }
    // A classification called while its preparation runs waits for it (a deployment's servers
    // serve one request per session: a new client).
    const second = await Client.connect({ ...one.clientOptions(), timeoutMs: 120_000 });
    try {
      const pending = second.prepare('logreg', { output: 'class' });
      const sample = referenceSample('logreg', 4);
      const r = await second.classify('logreg', sample.input, { output: 'class' });
      assert.equal(r.classes[0], sample.expected, 'logreg #4, prepared');
      assert.ok(r.timings.waited > 0, `waited ${r.timings.waited} ms`);
      await pending;
    } finally {
      second.close();
    }
  } finally {
    await one.stop();
  }
});
