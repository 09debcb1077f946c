// A private classification from Node: this process is the client of three server parties that
// run LeNet on a digit without seeing it; only this process learns the class.
//   node classify.mjs DIGIT.u8 [meteor|rep3] [SESSION_URL]
// DIGIT.u8: a 28×28 grayscale digit, 784 bytes row by row (white on black, as MNIST stores them).
// SESSION_URL: where the deployment hands out sessions (`ringfence local-deployment --dev`).
import { readFileSync } from 'node:fs';
import { Client, generateNoiseKeypair, init, toHex } from 'ringfence';

const [file, backend = 'meteor', sessionUrl = 'http://127.0.0.1:8787/session'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node classify.mjs DIGIT.u8 [meteor|rep3] [SESSION_URL]');
  process.exit(2);
}
await init();
const pixels = Float32Array.from(readFileSync(file), (b) => b / 255); // LeNet takes [0, 1]

// This client's Noise keypair first: the session's join token is bound to its public key (the
// server parties refuse the session for any other key the relay might hand them).
const keypair = generateNoiseKeypair();
// A fresh session: the relay's URL, the session id and its join token, the parties' public keys.
// In production your backend issues it (see the README); here the local deployment does.
const response = await fetch(`${sessionUrl}?key=${toHex(keypair.publicKey)}`).catch((e) => {
  throw new Error(`no session at ${sessionUrl} (${e.cause?.message ?? e.message}): is \`ringfence local-deployment --dev\` running?`);
});
const client = await Client.connect({ ...(await response.json()), keypair });
const r = await client.classify('lenet', pixels, { backend });
client.close();

const ms = (x) => `${x.toFixed(1)} ms`;
console.log(`class ${r.classes[0]} (${backend}, over ${client.transport})`);
console.log(`time: request ${ms(r.timings.request)}, setup ${ms(r.timings.setup)}, online ${ms(r.timings.online)}`);
console.log(`client: sent ${r.stats.bytesSent} B, received ${r.stats.bytesReceived} B`);
console.log(`each party received ${r.sent[0].length} masked or shared values, random to it`);
