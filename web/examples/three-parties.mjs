// Three compute parties in one process, connected by an in-memory network.
import { InMemoryNetwork, Party, RingfenceError, decodeFixed, encodeFixed, init, insecureTestSeeds, randomSessionId } from 'ringfence';

await init(); // loads the SIMD module where supported, else the fallback (with a warning)

const net = new InMemoryNetwork(3);
const sessionId = randomSessionId();
const parties = await Promise.all([0, 1, 2].map(async (id) =>
  Party.join({
    id,
    sessionId,
    seeds: await insecureTestSeeds('readme', id), // TEST ONLY: see "Security model"
    transport: net.transport(id),
  })));

// Every party runs the same operations in the same order. P0 owns x, P1 owns y.
const x = [3n, -4n, 0n];
const y = [5n, 7n, -1n];
const reals = [1.5, -2.25, 0.5];
const results = await Promise.all(parties.map(async (p, id) => {
  const xs = await p.input(0, id === 0 ? BigInt64Array.from(x) : null, 3);
  const ys = await p.input(1, id === 1 ? BigInt64Array.from(y) : null, 3);
  const product = await p.mul(xs, ys); // x·y mod 2^64
  const less = await p.lt(xs, ys); // [x < y] as signed integers
  // Fixed point: reals × 2^16 in the ring; products are truncated with preprocessed pairs.
  const pairs = await p.truncPairs(3, 16);
  const f = await p.input(2, id === 2 ? encodeFixed(reals, 16) : null, 3);
  const squares = await p.mulFixed(f, f, pairs);
  const out = {
    product: await p.reveal(product),
    less: await p.revealBits(less),
    squares: decodeFixed(await p.reveal(squares), 16),
  };
  p.finish();
  return out;
}));
net.close();

const { product, less, squares } = results[0];
console.log('x·y   =', [...product]); // [ 15n, -28n, 0n ]
console.log('x < y =', [...less]); // [ 1, 1, 0 ]
console.log('r²    =', [...squares].map((v) => v.toFixed(4))); // [ '2.2500', '5.0625', '0.2500' ]

// Bad input fails before anything is sent, with a stable code.
try {
  await parties[0].mul(parties[0].random(2), parties[0].random(3));
} catch (e) {
  console.log(e instanceof RingfenceError, e.code); // true LENGTH_MISMATCH
}
