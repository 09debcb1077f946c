// A private classification: this process is the client; three parties serve the NN-A model
// (MNIST digits) through a relay. They see only masked pixels; the answer is reconstructed here.
import { readFileSync } from 'node:fs';
import { Client, generateNoiseKeypair, init, randomSessionId } from 'ringfence';
import { startDeployment } from './local-deployment.mjs';

await init();
const keypair = generateNoiseKeypair(); // the client's identity: the parties authenticate it
const session = randomSessionId();
// Relay + three native party processes on this machine (in production: three operators).
const deployment = await startDeployment({ model: 'nn-a', session, client: keypair.publicKey });

// Held-out test digit #0, as the model takes it: 28×28 pixels in [0, 1].
const mnist = readFileSync(new URL('../../models/data/mnist-test-1000.u8', import.meta.url));
const pixels = Float32Array.from(mnist.subarray(0, 784), (b) => b / 255);

const client = await Client.connect({
  relay: deployment.relay,
  session,
  parties: deployment.publicKeys,
  keypair,
  onProgress: (e) => console.log(`${e.stage}: ${e.bytesSent} B sent`), // connecting … done
});
const result = await client.classify('nn-a', pixels, { backend: 'meteor' });
client.close();
await deployment.stop();

console.log('class', result.classes[0]); // class 1 (as onnxruntime says)
console.log('P0 received', result.sent[0].length, 'masked values'); // what a server saw: noise
