// node quickstart-node.mjs digit.u8 — with `ringfence local-deployment --dev` running here.
// digit.u8: a 28×28 grayscale digit, 784 bytes row by row (white on black, as MNIST stores them).
import { readFileSync } from 'node:fs';
import { Client, generateNoiseKeypair, init, toHex } from 'ringfence';

await init();
const pixels = Float32Array.from(readFileSync(process.argv[2]), (b) => b / 255); // LeNet takes [0, 1]
// This client's key first: the session's token is bound to it (the servers check).
const keypair = generateNoiseKeypair();
// A fresh session of the local deployment: relay URL, session id and token, parties' keys (hex).
const session = await (await fetch(`http://127.0.0.1:8787/session?key=${toHex(keypair.publicKey)}`)).json();
const client = await Client.connect({ ...session, keypair });
const { classes, sent } = await client.classify('lenet', pixels);
client.close();
console.log('class', classes[0]); // the parties saw only masked pixels:
console.log('P0 received', sent[0].length, 'masked values');
