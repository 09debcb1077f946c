// A private classification from Node: this process is the client of three server parties that
// run LeNet on a held-out MNIST digit without seeing it; only this process learns the class.
//   node classify.mjs [SAMPLE 0..999] [meteor|rep3]
import { Client, init } from 'ringfence';
import { referenceSample, startLocalDeployment } from '../../web/examples/local-deployment.mjs';

const [sample = 0, backend = 'meteor'] = process.argv.slice(2);
await init();
// A relay and three long-running `ringfence party` servers on 127.0.0.1 (in production: three
// operators who do not collude, and a relay; your backend issues each session's token).
const deployment = await startLocalDeployment();
try {
  const { input } = referenceSample('lenet', Number(sample)); // 28×28 pixels in [0, 1]
  const options = deployment.clientOptions(); // { relay, deployment, session, token, parties }
  const served = new Promise((resolve) => { // the servers' log events for this session
    const sid = Buffer.from(options.session.subarray(0, 4)).toString('hex');
    const seen = [];
    deployment.onEvent((e) => e.session === sid && seen.push(e) === 3 && resolve(seen));
  });
  const client = await Client.connect(options);
  const r = await client.classify('lenet', input, { backend });
  client.close();
  const ms = (x) => `${x.toFixed(1)} ms`;
  console.log(`class ${r.classes[0]} (sample ${sample}, ${backend})`);
  console.log(`time: request ${ms(r.timings.request)}, setup ${ms(r.timings.setup)}, online ${ms(r.timings.online)}`);
  console.log(`client: sent ${r.stats.bytesSent} B, received ${r.stats.bytesReceived} B`);
  for (const e of (await served).sort((a, b) => a.party - b.party)) {
    console.log(`P${e.party}: ${e.event}, sent ${e.setup_bytes} B in setup, ${e.online_bytes} B online`);
  }
} finally {
  await deployment.stop();
}
