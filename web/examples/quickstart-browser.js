// main.js of a Vite page (index.html: <script type="module" src="/main.js"></script>), with
// `ringfence local-deployment --dev` running here and a 28×28 digit (white on black) at public/digit.png.
import { Client, generateNoiseKeypair, init, toHex } from 'ringfence';

await init();
const img = new Image();
img.src = '/digit.png';
await img.decode();
const ctx = Object.assign(document.createElement('canvas'), { width: 28, height: 28 }).getContext('2d');
ctx.drawImage(img, 0, 0, 28, 28);
const rgba = ctx.getImageData(0, 0, 28, 28).data; // a Uint8ClampedArray, 0–255
const pixels = Float32Array.from({ length: 784 }, (_, i) => rgba[4 * i] / 255); // LeNet takes [0, 1]
const keypair = generateNoiseKeypair(); // the session's token is bound to its public key
const session = await (await fetch(`http://127.0.0.1:8787/session?key=${toHex(keypair.publicKey)}`)).json();
const client = await Client.connect({ ...session, keypair });
const { classes } = await client.classify('lenet', pixels);
client.close();
document.body.textContent = `class ${classes[0]} (${client.transport})`;
