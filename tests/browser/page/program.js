// What the parties compute in the worker tests, shared by the page and the worker (both load
// it by path: workers see no import map).
import { RingfenceError } from '/dist/index.js';

/**
 * P0, P1 and P2 input x, y and z (n values each; `own` is this party's vector); reveals x·y,
 * [x < z] and relu(z − y).
 */
export async function workerProgram(party, id, n, own) {
  const share = (owner) => party.input(owner, owner === id ? BigInt64Array.from(own) : null, n);
  const x = await share(0);
  const y = await share(1);
  const z = await share(2);
  const store = await party.dabits(n);
  return {
    mul: [...(await party.reveal(await party.mul(x, y)))],
    lt: [...(await party.revealBits(await party.lt(x, z)))],
    relu: [...(await party.reveal(await party.relu(party.sub(z, y), store)))],
  };
}

/** A thrown value as plain data (errors do not cross evaluate() or postMessage intact). */
export function describeError(e) {
  return { ringfence: e instanceof RingfenceError, name: e?.name, code: e?.code, peer: e?.peer, message: String(e?.message ?? e) };
}
