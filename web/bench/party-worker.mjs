// One wasm party of bench/ops.mjs in its own worker thread. The main thread sends
// { ports, id, sessionId, module }, then one { op, n } per timed run; the worker answers each
// run with the party's counters for it once the run is over.
import { parentPort, workerData } from 'node:worker_threads';
import { Party, init, insecureTestSeeds } from 'ringfence';
import { portTransport } from './port-transport.mjs';

const { id, ports, sessionId, module } = workerData;
await init({ forceFallback: module === 'nosimd' });
const party = await Party.join({ id, sessionId, seeds: await insecureTestSeeds('bench', id), transport: portTransport(ports) });

const OPS = {
  mul: (x, y) => party.mul(x, y),
  lt: (x, y) => party.lt(x, y),
};

let prepared; // the operands and operation of the next run, made before the clock starts
parentPort.on('message', async (msg) => {
  if (msg !== 'go') {
    // The previous run's operands and result are freed first, before the clock starts, as the
    // native bench drops them: left to the garbage collector, their memory would be reused
    // only once it finalizes them, and each run would grow the module's memory instead.
    for (const v of [prepared?.x, prepared?.y, prepared?.result]) v?.free();
    // Random sharings are local: no communication before "go".
    prepared = { op: OPS[msg.op], x: party.random(msg.n), y: party.random(msg.n) };
    parentPort.postMessage({ ready: true });
    return;
  }
  const { op, x, y } = prepared;
  const before = party.stats();
  prepared.result = await op(x, y);
  const after = party.stats();
  const stats = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
  parentPort.postMessage({ done: true, stats });
});
parentPort.postMessage({ joined: true });
